import Dispatch
import StoreRelayCore

/// One short connection that sends a few commands and closes: how the locator asks a
/// cluster seed for its slot map or a sentinel for the primary. It greets like any connection
/// (TLS, HELLO, AUTH) but runs none of the client's connection checks: a seed or a sentinel
/// is asked, never written to.
enum RedisProbe {
    /// Sends `commands` to `url`; `completion` gets their replies once, or why there are none.
    static func ask(_ url: RedisURL, _ commands: [RESPCommand], like configuration: RedisConfiguration,
                    connector: OutboundConnector, completion: @escaping @Sendable (Result<[RESPValue], RedisError>) -> Void) {
        var probe = configuration
        probe.url = url
        probe.connectionChecks = []
        probe.acceptConnection = nil
        probe.clientName = configuration.clientName.map { $0 + "-topology" }
        probe.connectTimeout = min(configuration.connectTimeout, .seconds(2))
        probe.commandTimeout = min(configuration.commandTimeout, .seconds(2))
        probe.logger = .disabled
        let finished = Locked(false)
        let finish: @Sendable (Result<[RESPValue], RedisError>) -> Void = { result in
            guard finished.withLock({ done in defer { done = true }; return !done }) else { return }
            completion(result)
        }
        let box = Locked<RedisConnection?>(nil)
        let connection = RedisConnection(
            configuration: probe, connector: connector,
            onReady: {
                guard let connection = box.current else { return }
                connection.send(commands) { results in
                    // Answered first, closed after: the close reports `.shutdown`, which must
                    // not be taken for the answer.
                    finish(Self.replies(results))
                    connection.shutdown()
                }
            },
            onClosed: { error in
                finish(.failure(error))
                box.withLock { $0 = nil }  // the connection and its callbacks hold each other until now
            })
        box.withLock { $0 = connection }
        connection.open()
    }

    private static func replies(_ results: [Result<RESPValue, RedisError>]) -> Result<[RESPValue], RedisError> {
        var replies: [RESPValue] = []
        for result in results {
            switch result {
            case .success(let reply): replies.append(reply)
            case .failure(let error): return .failure(error)
            }
        }
        return .success(replies)
    }
}
