import Dispatch
import StoreRelayCore

/// A Redis/Valkey client on StoreRelay's own transport: one pipelined connection, kept open
/// and reopened after any failure with backoff and jitter. Commands sent while there is no
/// connection fail at once with `.unavailable` (the gateway answers 503 then), never wait.
public final class RedisClient: Sendable {
    public let configuration: RedisConfiguration

    private struct State {
        var connection: RedisConnection?
        var isReady = false
        var failures = 0
        var lastError: RedisError?
        var isShutDown = false
        var observers: [@Sendable (Bool, RedisError?) -> Void] = []
    }
    private let state = Locked(State())
    private let timers = DispatchQueue(label: "storerelay.redis.reconnect", target: .deliveryWork)

    public init(configuration: RedisConfiguration) {
        self.configuration = configuration
    }

    /// Starts connecting; the client keeps a connection open from now on until `shutdown`.
    public func start() {
        let connection = state.withLock { state -> RedisConnection? in
            guard !state.isShutDown, state.connection == nil else { return nil }
            let connection = makeConnection()
            state.connection = connection
            return connection
        }
        connection?.open()
    }

    /// Whether a connection is open and greeted now.
    public var isConnected: Bool { state.withLock { $0.isReady } }

    /// Why the last connection failed or was refused, if it did.
    public var lastError: RedisError? { state.withLock { $0.lastError } }

    /// Calls `observer` on every change: connected (true, nil) or lost (false, why).
    public func observeConnection(_ observer: @escaping @Sendable (Bool, RedisError?) -> Void) {
        state.withLock { $0.observers.append(observer) }
    }

    /// Sends one command; `completion` gets the reply (an error reply is a `.success`).
    public func send(_ command: RESPCommand, completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) {
        guard let connection = readyConnection(completion) else { return }
        connection.send(command, completion: completion)
    }

    /// Sends every command in one write (a pipeline); the results come in the same order.
    public func send(_ commands: [RESPCommand], completion: @escaping @Sendable ([Result<RESPValue, RedisError>]) -> Void) {
        guard let connection = readyConnection({ result in
            if case .failure(let error) = result { completion(Array(repeating: .failure(error), count: commands.count)) }
        }) else { return }
        connection.send(commands, completion: completion)
    }

    /// Runs `script` by its SHA-1; when the server does not have it (`NOSCRIPT`), loads it
    /// and runs it again, once.
    public func evaluate(
        _ script: RedisScript, keys: [String], arguments: [[UInt8]],
        completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void
    ) {
        let command = script.evalsha(keys: keys, arguments: arguments)
        send(command) { [self] result in
            guard case .success(let reply) = result, reply.errorKind == "NOSCRIPT" else { return completion(result) }
            send([script.load, command]) { results in
                if case .success(let loaded) = results[0], loaded.string != script.sha1 {
                    let got = loaded.string ?? loaded.description
                    return completion(.failure(RedisError(.protocolError, "SCRIPT LOAD answered \(got), expected \(script.sha1)")))
                }
                completion(results[1])
            }
        }
    }

    /// Closes the connection and stops reconnecting; commands in flight fail with `.shutdown`.
    public func shutdown() {
        let connection = state.withLock { state -> RedisConnection? in
            state.isShutDown = true
            state.isReady = false
            defer { state.connection = nil }
            return state.connection
        }
        connection?.shutdown()
    }

    /// Closes the connection of the moment as if it had failed with `error`: commands in
    /// flight fail with it, and the client reconnects (its connection checks run again).
    /// For a caller that learns the connection must not be used any longer.
    public func dropConnection(_ error: RedisError) {
        state.withLock { $0.connection }?.drop(error)
    }

    // MARK: Connections

    /// The connection to send on, or why there is none.
    func currentConnection() -> Result<RedisConnection, RedisError> {
        state.withLock { state -> Result<RedisConnection, RedisError> in
            if state.isShutDown { return .failure(RedisError(.shutdown, "the Redis client was shut down")) }
            guard state.isReady, let connection = state.connection else {
                let why = state.lastError.map { ": \($0.message)" } ?? ""
                return .failure(RedisError(.unavailable, "not connected to \(configuration.url)\(why)"))
            }
            return .success(connection)
        }
    }

    /// The connection to send on, or nil after reporting why there is none to `fail`.
    private func readyConnection(_ fail: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) -> RedisConnection? {
        switch currentConnection() {
        case .success(let connection):
            return connection
        case .failure(let error):
            configuration.callbackQueue.async { fail(.failure(error)) }
            return nil
        }
    }

    private func makeConnection() -> RedisConnection {
        // The connection reports back through a weak reference: the client owns it, not the reverse.
        let connectionBox = Locked<RedisConnection?>(nil)
        let connection = RedisConnection(
            configuration: configuration,
            onReady: { [weak self] in self?.connectionReady(connectionBox.current) },
            onClosed: { [weak self] error in self?.connectionClosed(connectionBox.current, error) })
        connectionBox.withLock { $0 = connection }
        return connection
    }

    private func connectionReady(_ connection: RedisConnection?) {
        let observers = state.withLock { state -> [@Sendable (Bool, RedisError?) -> Void] in
            guard state.connection === connection else { return [] }
            state.isReady = true
            state.failures = 0
            state.lastError = nil
            return state.observers
        }
        configuration.logger.info("connected to redis", [("redis.url", configuration.url.description)])
        for observer in observers { observer(true, nil) }
    }

    private func connectionClosed(_ connection: RedisConnection?, _ error: RedisError) {
        let (observers, delay) = state.withLock { state -> ([@Sendable (Bool, RedisError?) -> Void], Duration?) in
            guard state.connection === connection, !state.isShutDown else { return ([], nil) }
            let wasReady = state.isReady
            state.isReady = false
            state.connection = nil
            state.lastError = error
            state.failures += 1
            return (wasReady || state.failures == 1 ? state.observers : [], Self.backoff(after: state.failures, configuration))
        }
        guard let delay else { return }
        configuration.logger.warning("redis connection lost; reconnecting", [
            ("redis.url", configuration.url.description), ("error", error.message), ("retry.ms", String(delay.wholeMilliseconds)),
        ])
        for observer in observers { observer(false, error) }
        timers.asyncAfter(deadline: .now().advanced(by: delay)) { [weak self] in self?.start() }
    }

    /// Full jitter: a random wait up to `initial · 2^(failures-1)`, capped at `maximum`.
    static func backoff(after failures: Int, _ configuration: RedisConfiguration) -> Duration {
        let initial = max(1, configuration.reconnectInitial.wholeMilliseconds)
        let maximum = max(initial, configuration.reconnectMaximum.wholeMilliseconds)
        let exponent = min(max(failures - 1, 0), 30)
        let ceiling = min(maximum, initial << exponent)
        return .milliseconds(Int64.random(in: 0...ceiling))
    }
}
