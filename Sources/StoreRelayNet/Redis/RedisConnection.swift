import Dispatch
import StoreRelayCore

/// One connection to a Redis server, carrying any number of pipelined commands: an
/// `OutboundConnection` (resolve, dial, TLS, read, write, deadline) driven by the rules of
/// `RESPPipelineStateMachine` (greeting, replies matched to commands in order, timeouts).
/// This type performs the machine's actions and runs the callers' completions.
///
/// Life: connecting (resolving, dialing, handshaking for rediss) → greeting (HELLO/AUTH,
/// SELECT, the configured checks) → ready → closed. A connection is used once; the client makes
/// a new one to reconnect. `@unchecked Sendable`: every `var` is touched only on `queue`,
/// where the driver delivers its events.
final class RedisConnection: @unchecked Sendable {
    typealias Completion = @Sendable (Result<RESPValue, RedisError>) -> Void

    let queue = DispatchQueue(label: "storerelay.redis.connection", target: .deliveryWork)
    private let configuration: RedisConfiguration
    private let connector: OutboundConnector
    /// Called once, on `queue`, when the greeting succeeded.
    private let onReady: @Sendable () -> Void
    /// Called once, on `queue`, when the connection is gone, with why.
    private let onClosed: @Sendable (RedisError) -> Void

    private var machine: RESPPipelineStateMachine<Completion>
    private var connection: OutboundConnection?

    init(
        configuration: RedisConfiguration, connector: OutboundConnector, onReady: @escaping @Sendable () -> Void,
        onClosed: @escaping @Sendable (RedisError) -> Void
    ) {
        self.configuration = configuration
        self.connector = connector
        machine = RESPPipelineStateMachine(configuration: configuration)
        self.onReady = onReady
        self.onClosed = onClosed
    }

    var origin: String { configuration.url.description }

    /// Resolves, connects, handshakes and greets; `onReady` or `onClosed` follows.
    func open() {
        queue.async { [self] in
            guard connection == nil, machine.state == .connecting else { return }
            let url = configuration.url
            let tls = url.usesTLS
                ? TLSClientIdentity(caFile: configuration.caFile, certificateChainFile: configuration.clientCertificateFile,
                                    privateKeyFile: configuration.clientKeyFile)
                : nil
            let connection = OutboundConnection(
                to: OutboundEndpoint(host: url.host, port: url.port, tls: tls), peer: origin, connector: connector,
                queue: queue, logger: configuration.logger) { [self] event in handle(event) }
            self.connection = connection
            connection.open()
            perform(machine.open(now: .now()))
        }
    }

    // MARK: Commands

    /// Sends `command` now (pipelined behind any others); `completion` gets its reply on the
    /// configured callback queue. Call on any thread.
    func send(_ command: RESPCommand, completion: @escaping Completion) {
        let callbackQueue = configuration.callbackQueue
        let waiter: Completion = { result in callbackQueue.async { completion(result) } }
        queue.async { [self] in perform(machine.send([(command, waiter)], now: .now())) }
    }

    /// Sends every command in one write; the completions run in order.
    func send(_ commands: [RESPCommand], completion: @escaping @Sendable ([Result<RESPValue, RedisError>]) -> Void) {
        let callbackQueue = configuration.callbackQueue
        let results = Locked<[Result<RESPValue, RedisError>]>([])
        let one: Completion = { result in
            let done = results.withLock { results -> [Result<RESPValue, RedisError>]? in
                results.append(result)
                return results.count == commands.count ? results : nil
            }
            if let done { callbackQueue.async { completion(done) } }
        }
        queue.async { [self] in
            perform(machine.send(commands.map { ($0, one) }, now: .now()))
        }
    }

    /// Closes the connection (from any thread): every command still unanswered fails.
    func shutdown() {
        drop(RedisError(.shutdown, "the Redis client was shut down"))
    }

    /// Closes the connection (from any thread) as if it had failed with `error`.
    func drop(_ error: RedisError) {
        queue.async { [self] in perform(machine.close(error)) }
    }

    // MARK: The driver's events, the machine's actions

    private func handle(_ event: OutboundEvent) {
        switch event {
        case .resolved: break
        case .established: perform(machine.established())
        case .received(let bytes):
            machine.received(bytes)
            while machine.state != .closed, let action = machine.nextReply() { perform(action) }
        case .inputEnded: perform(machine.inputEnded())
        case .deadline: perform(machine.deadlinePassed(now: .now()))
        case .failed(let error): perform(machine.failed(error))
        }
    }

    private func perform(_ action: RESPPipelineStateMachine<Completion>.Action?) {
        switch action {
        case nil: break
        case .send(let bytes, let deadline)?:
            if let deadline { connection?.setDeadline(deadline) }
            connection?.write(bytes)
        case .setDeadline(let time)?:
            connection?.setDeadline(time)
        case .reject(let waiters, let error)?:
            for waiter in waiters { waiter(.failure(error)) }
        case .deliver(let waiter, let reply)?:
            waiter(.success(reply))
        case .ready(let deadline)?:
            connection?.setDeadline(deadline)
            onReady()
        case .close(let error, let unanswered)?:
            connection?.close()
            // The client learns first, so whoever hears of a failed command sees it disconnected.
            onClosed(error)
            for waiter in unanswered { waiter(.failure(error)) }
        }
    }
}
