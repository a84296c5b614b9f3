/// The client's connection of the moment, held for commands that must all run on it: WAITAOF
/// waits for the writes *of its own connection*, so sent on another one (after a reconnect,
/// say) it would wait for nothing and report success. Once that connection is gone, every
/// command sent through the session fails; none moves to the next connection. For the same
/// reason nothing is redirected: a MOVED, ASK or READONLY reaches the caller as the error
/// reply it is (the client still follows a MOVED or a READONLY for its next connection).
public struct RedisSession: Sendable {
    private let connection: RedisConnection
    private let client: RedisClient

    init(_ connection: RedisConnection, client: RedisClient) {
        self.connection = connection
        self.client = client
    }

    /// Which connection the session is on: two sessions with the same id share it (and its
    /// writes, which one WAITAOF covers for both).
    public var connectionID: ObjectIdentifier { ObjectIdentifier(connection) }

    /// Sends one command on the session's connection; `completion` gets its reply (an error
    /// reply is a `.success`), or a failure once the connection is gone.
    public func send(_ command: RESPCommand, completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) {
        connection.send(command, completion: noticing(completion))
    }

    /// Runs `script` by its SHA-1 on the session's connection; when the server does not have
    /// it (`NOSCRIPT`), loads it and runs it again, once.
    public func evaluate(
        _ script: RedisScript, keys: [String], arguments: [[UInt8]],
        completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void
    ) {
        let command = script.evalsha(keys: keys, arguments: arguments)
        connection.send(command, completion: noticing { [connection] result in
            guard case .success(let reply) = result, reply.errorKind == "NOSCRIPT" else { return completion(result) }
            connection.send([script.load, command]) { results in
                if case .success(let loaded) = results[0], loaded.string != script.sha1 {
                    let got = loaded.string ?? loaded.description
                    return completion(.failure(RedisError(.protocolError, "SCRIPT LOAD answered \(got), expected \(script.sha1)")))
                }
                completion(noticed(results[1]))
            }
        })
    }

    /// `completion`, after the client saw the reply (to follow a MOVED or READONLY).
    private func noticing(_ completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void)
        -> @Sendable (Result<RESPValue, RedisError>) -> Void {
        { [self] result in completion(noticed(result)) }
    }

    private func noticed(_ result: Result<RESPValue, RedisError>) -> Result<RESPValue, RedisError> {
        if case .success(let reply) = result, reply.errorKind != nil { _ = client.notice(reply, on: connection) }
        return result
    }
}

extension RedisClient {
    /// A session on the connection open now, or why there is none.
    public func session() -> Result<RedisSession, RedisError> {
        currentConnection().map { RedisSession($0, client: self) }
    }
}
