import Dispatch
import StoreRelayCore

/// Publishes to one AMQP 0-9-1 broker with publisher confirms: one connection at a time, an
/// `OutboundConnection` (resolve, dial, TLS, read, write, deadline) driven by the rules of
/// `AMQPPublisherStateMachine`. This type performs the machine's actions and runs the
/// callers' completions. When the connection ends (the broker closed it, the network failed,
/// a confirmation timed out), its unsettled publishes fail and the next publish opens a new
/// one: reconnecting is the caller's retry, paced by its backoff, never a loop in here.
///
/// `@unchecked Sendable`: every `var` is touched only on `queue`, where the driver delivers
/// its events.
public final class AMQPPublisher: @unchecked Sendable {
    public typealias Completion = @Sendable (Result<Void, AMQPError>) -> Void

    private let queue = DispatchQueue(label: "storerelay.amqp.connection", target: .deliveryWork)
    private let configuration: AMQPConfiguration
    private let connector: OutboundConnector
    private var machine: AMQPPublisherStateMachine<Completion>?
    private var connection: OutboundConnection?
    private var isShutDown = false

    public init(configuration: AMQPConfiguration, connector: OutboundConnector = OutboundConnector()) {
        self.configuration = configuration
        self.connector = connector
    }

    /// Publishes `message` (from any thread); `completion` runs once on the configured
    /// callback queue: success once the broker confirmed it.
    public func publish(_ message: AMQPMessage, completion: @escaping Completion) {
        let callbackQueue = configuration.callbackQueue
        let waiter: Completion = { result in callbackQueue.async { completion(result) } }
        queue.async { [self] in
            guard !isShutDown else { return waiter(.failure(AMQPError(.shutdown, "the AMQP publisher was shut down"))) }
            if machine == nil || machine?.state == .closed { connect() }
            perform(machine?.publish(message, waiter: waiter, now: .now()) ?? [])
        }
    }

    /// Closes the connection; every publish not yet confirmed fails, and so do later ones.
    public func shutdown(completion: (@Sendable () -> Void)? = nil) {
        queue.async { [self] in
            isShutDown = true
            perform(machine?.close(AMQPError(.shutdown, "the AMQP publisher was shut down")) ?? [])
            completion?()
        }
    }

    private func connect() {
        dispatchPrecondition(condition: .onQueue(queue))
        let url = configuration.url
        machine = AMQPPublisherStateMachine(configuration: configuration)
        let tls = url.usesTLS ? TLSClientIdentity(caFile: configuration.caFile) : nil
        let connection = OutboundConnection(
            to: OutboundEndpoint(host: url.host, port: url.port, tls: tls), peer: url.description, connector: connector,
            queue: queue, logger: configuration.logger) { [weak self] event in self?.handle(event) }
        self.connection = connection
        connection.open()
        perform(machine?.open(now: .now()) ?? [])
    }

    // MARK: The driver's events, the machine's actions

    private func handle(_ event: OutboundEvent) {
        let now = DispatchTime.now()
        switch event {
        case .resolved: break
        case .established: perform(machine?.established(now: now) ?? [])
        case .received(let bytes): perform(machine?.received(bytes, now: now) ?? [])
        case .inputEnded: perform(machine?.inputEnded() ?? [])
        case .deadline: perform(machine?.deadlinePassed(now: now) ?? [])
        case .failed(let error): perform(machine?.failed(error) ?? [])
        }
    }

    private func perform(_ actions: [AMQPPublisherStateMachine<Completion>.Action]) {
        for action in actions {
            switch action {
            case .write(let bytes): connection?.write(bytes)
            case .setDeadline(let time): connection?.setDeadline(time)
            case .settle(let settled): for (waiter, result) in settled { waiter(result) }
            case .close(let error, let unsettled):
                connection?.close()
                connection = nil
                if error.code != .shutdown { configuration.logger.info("AMQP connection to \(configuration.url) ended: \(error)") }
                for waiter in unsettled { waiter(.failure(error)) }
            }
        }
    }
}
