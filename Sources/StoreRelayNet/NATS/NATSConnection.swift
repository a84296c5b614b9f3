import Dispatch
import StoreRelayCore

/// One connection to a NATS server carrying any number of JetStream publishes at once: an
/// `OutboundConnection` (resolve, dial, TLS, read, write, deadline) driven by the rules of
/// `NATSConnectionStateMachine`. This type performs the machine's actions and runs the
/// callers' completions.
///
/// Life: connecting → INFO (→ TLS upgrade) → CONNECT/PONG → ready → closed. A connection is
/// used once; `NATSClient` makes a new one after it closes. `@unchecked Sendable`: every `var`
/// is touched only on `queue`, where the driver delivers its events.
final class NATSConnection: @unchecked Sendable {
    typealias Completion = @Sendable (Result<NATSPublishAnswer, NATSError>) -> Void

    let queue = DispatchQueue(label: "storerelay.nats.connection", target: .deliveryWork)
    private let configuration: NATSConfiguration
    private let connector: OutboundConnector
    /// Called once, on `queue`, when the connection is gone, with why.
    private let onClosed: @Sendable (NATSError) -> Void

    private var machine: NATSConnectionStateMachine<Completion>
    private var connection: OutboundConnection?

    init(configuration: NATSConfiguration, connector: OutboundConnector, onClosed: @escaping @Sendable (NATSError) -> Void) {
        self.configuration = configuration
        self.connector = connector
        self.onClosed = onClosed
        var random = SystemRandomNumberGenerator()
        let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
        let token = String((0..<22).map { _ in alphabet[Int(random.next() % UInt64(alphabet.count))] })
        machine = NATSConnectionStateMachine(configuration: configuration, inboxToken: token)
    }

    /// Resolves, connects and greets; publishes made meanwhile wait for `ready`.
    func open() {
        queue.async { [self] in
            guard connection == nil, machine.state == .connecting else { return }
            let url = configuration.url
            let connection = OutboundConnection(
                to: OutboundEndpoint(host: url.host, port: url.port), peer: url.description, connector: connector,
                queue: queue, logger: configuration.logger) { [self] event in handle(event) }
            self.connection = connection
            connection.open()
            perform(machine.open(now: .now()))
        }
    }

    /// Publishes `message`; `completion` gets the stream's answer, or why there is none, on
    /// the configured callback queue. Call on any thread.
    func publish(_ message: NATSPublish, timeout: Duration, completion: @escaping Completion) {
        let callbackQueue = configuration.callbackQueue
        let waiter: Completion = { result in callbackQueue.async { completion(result) } }
        queue.async { [self] in
            perform(machine.publish(message, waiter: waiter, deadline: DispatchTime.now().advanced(by: timeout)))
        }
    }

    /// Closes the connection (from any thread): every publish still unanswered fails.
    func shutdown() {
        queue.async { [self] in perform(machine.close(NATSError(.shutdown, "the NATS client was shut down"))) }
    }

    // MARK: The driver's events, the machine's actions

    private func handle(_ event: OutboundEvent) {
        switch event {
        case .resolved: break
        case .established: perform(machine.established())
        case .received(let bytes): perform(machine.received(bytes, now: .now()))
        case .inputEnded: perform(machine.inputEnded())
        case .deadline: perform(machine.deadlinePassed(now: .now()))
        case .failed(let error): perform(machine.failed(error))
        }
    }

    private func perform(_ actions: [NATSConnectionStateMachine<Completion>.Action]) {
        for action in actions {
            switch action {
            case .send(let bytes): connection?.write(bytes)
            case .startTLS: connection?.startTLS(configuration.tlsIdentity)
            case .setDeadline(let time): connection?.setDeadline(time)
            case .deliver(let waiter, let answer): waiter(.success(answer))
            case .fail(let waiters, let error):
                for waiter in waiters { waiter(.failure(error)) }
            case .close(let error, let unanswered):
                connection?.close()
                connection = nil
                onClosed(error)
                for waiter in unanswered { waiter(.failure(error)) }
            }
        }
    }
}
