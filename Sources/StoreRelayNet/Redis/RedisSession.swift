/// The client's connection of the moment, held for commands that must all run on it: WAITAOF
/// waits for the writes *of its own connection*, so sent on another one (after a reconnect,
/// say) it would wait for nothing and report success. Once that connection is gone, every
/// command sent through the session fails; none moves to the next connection.
public struct RedisSession: Sendable {
    private let connection: RedisConnection

    init(_ connection: RedisConnection) {
        self.connection = connection
    }

    /// Which connection the session is on: two sessions with the same id share it (and its
    /// writes, which one WAITAOF covers for both).
    public var connectionID: ObjectIdentifier { ObjectIdentifier(connection) }

    /// Sends one command on the session's connection; `completion` gets its reply (an error
    /// reply is a `.success`), or a failure once the connection is gone.
    public func send(_ command: RESPCommand, completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) {
        connection.send(command, completion: completion)
    }

    /// Runs `script` by its SHA-1 on the session's connection; when the server does not have
    /// it (`NOSCRIPT`), loads it and runs it again, once.
    public func evaluate(
        _ script: RedisScript, keys: [String], arguments: [[UInt8]],
        completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void
    ) {
        let command = script.evalsha(keys: keys, arguments: arguments)
        connection.send(command) { [connection] result in
            guard case .success(let reply) = result, reply.errorKind == "NOSCRIPT" else { return completion(result) }
            connection.send([script.load, command]) { results in
                if case .success(let loaded) = results[0], loaded.string != script.sha1 {
                    let got = loaded.string ?? loaded.description
                    return completion(.failure(RedisError(.protocolError, "SCRIPT LOAD answered \(got), expected \(script.sha1)")))
                }
                completion(results[1])
            }
        }
    }
}

extension RedisClient {
    /// A session on the connection open now, or why there is none.
    public func session() -> Result<RedisSession, RedisError> {
        currentConnection().map(RedisSession.init)
    }
}
