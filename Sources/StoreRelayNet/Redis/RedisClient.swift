import Dispatch
import StoreRelayCore

/// A Redis/Valkey client on StoreRelay's own transport: one pipelined connection, kept open
/// and reopened after any failure with backoff and jitter. Commands sent while there is no
/// connection fail at once with `.unavailable` (the gateway answers 503 then), never wait.
/// The connection goes to the node the topology names (`RedisLocator`; the URL's host for
/// one server), and follows it: MOVED and ASK (`RedisClient+Redirects`), failovers and
/// Sentinel's word (`RedisClient+Topology`).
public final class RedisClient: Sendable {
    public let configuration: RedisConfiguration

    struct State {
        var connection: RedisConnection?
        var isReady = false
        var failures = 0
        var lastError: RedisError?
        var isShutDown = false
        var observers: [@Sendable (Bool, RedisError?) -> Void] = []
        /// Asking the topology where to connect (no connection yet).
        var isLocating = false
        /// Where `connection` goes, when a topology named it (nil: the URL's host).
        var node: HostPort?
        /// The node the last MOVED or ASK named, connected for the redirected commands.
        var redirect: RedirectConnection?
        /// Sentinel: the sentinels asked again and again (started with the first connection).
        var sentinelWatch: SentinelWatch?
        /// The connection a MOVED or READONLY is closing: its other replies say the same, once.
        var dropping: ObjectIdentifier?
    }
    let state = Locked(State())
    /// Name resolution and TLS contexts, shared by every connection the client opens (its
    /// own, the redirected ones, the locator's probes).
    let connector: OutboundConnector
    let locator: RedisLocator
    let timers = DispatchQueue(label: "storerelay.redis.reconnect", target: .deliveryWork)

    public init(configuration: RedisConfiguration) {
        self.configuration = configuration
        connector = OutboundConnector(resolver: configuration.resolver)
        locator = RedisLocator(configuration: configuration, connector: connector)
    }

    /// Starts connecting; the client keeps a connection open from now on until `shutdown`.
    public func start() {
        let locate = state.withLock { state -> Bool in
            guard !state.isShutDown, state.connection == nil, !state.isLocating else { return false }
            state.isLocating = true
            return true
        }
        guard locate else { return }
        startSentinelWatch()
        locator.locate { [weak self] result in self?.located(result) }
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
        send(command, redirectedAs: nil, completion: completion)
    }

    /// Sends `command`; a MOVED or ASK sends `redirected` (default: the command itself) there.
    func send(_ command: RESPCommand, redirectedAs redirected: RESPCommand?,
              completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void) {
        guard let connection = readyConnection(completion) else { return }
        connection.send(command, completion: following(command, as: redirected, from: connection, completion))
    }

    /// Sends every command in one write (a pipeline); the results come in the same order.
    public func send(_ commands: [RESPCommand], completion: @escaping @Sendable ([Result<RESPValue, RedisError>]) -> Void) {
        send(commands, redirectedAs: [], completion: completion)
    }

    /// A pipeline whose commands, redirected, are sent as `redirected[i]` when given.
    func send(_ commands: [RESPCommand], redirectedAs redirected: [RESPCommand?],
              completion: @escaping @Sendable ([Result<RESPValue, RedisError>]) -> Void) {
        guard let connection = readyConnection({ result in
            if case .failure(let error) = result { completion(Array(repeating: .failure(error), count: commands.count)) }
        }) else { return }
        connection.send(commands, completion: following(commands, as: redirected, from: connection, completion))
    }

    /// Runs `script` by its SHA-1; when the server does not have it (`NOSCRIPT`), loads it
    /// and runs it again, once.
    public func evaluate(
        _ script: RedisScript, keys: [String], arguments: [[UInt8]],
        completion: @escaping @Sendable (Result<RESPValue, RedisError>) -> Void
    ) {
        let command = script.evalsha(keys: keys, arguments: arguments)
        // Redirected to a node that may not have the script: sent there whole (EVAL). Only a
        // cluster redirects, so only a cluster pays for building it.
        let redirected = configuration.topology.isCluster ? script.eval(keys: keys, arguments: arguments) : nil
        send(command, redirectedAs: redirected) { [self] result in
            guard case .success(let reply) = result, reply.errorKind == "NOSCRIPT" else { return completion(result) }
            send([script.load, command], redirectedAs: [nil, redirected]) { results in
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
        let (connection, redirect, sentinelWatch) = state.withLock { state in
            state.isShutDown = true
            state.isReady = false
            defer { (state.connection, state.redirect, state.sentinelWatch) = (nil, nil, nil) }
            return (state.connection, state.redirect, state.sentinelWatch)
        }
        connection?.shutdown()
        redirect?.close()
        sentinelWatch?.stop()
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
                return .failure(RedisError(.unavailable, "not connected to \(server)\(why)"))
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

    /// A connection to `node` (nil: the URL's host).
    func makeConnection(to node: HostPort?) -> RedisConnection {
        var target = configuration
        if let node { target.url = configuration.url.at(node) }
        // The connection reports back through a weak reference: the client owns it, not the reverse.
        let connectionBox = Locked<RedisConnection?>(nil)
        let connection = RedisConnection(
            configuration: target, connector: connector,
            onReady: { [weak self] in self?.connectionOpened(connectionBox.current) },
            onClosed: { [weak self] error in self?.connectionClosed(connectionBox.current, error) })
        connectionBox.withLock { $0 = connection }
        return connection
    }

    func connectionReady(_ connection: RedisConnection?) {
        let observers = state.withLock { state -> [@Sendable (Bool, RedisError?) -> Void] in
            guard state.connection === connection else { return [] }
            state.isReady = true
            state.failures = 0
            state.lastError = nil
            return state.observers
        }
        configuration.logger.info("connected to redis", [("redis.url", server)] + nodeMetadata)
        for observer in observers { observer(true, nil) }
    }

    func connectionClosed(_ connection: RedisConnection?, _ error: RedisError) {
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
            ("redis.url", server), ("error", error.message), ("retry.ms", delay.wholeMilliseconds),
        ] + nodeMetadata)
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
