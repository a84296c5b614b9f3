import Dispatch
import StoreRelayCore

/// A NATS JetStream publisher on StoreRelay's own transport: one connection at a time,
/// opened on the first publish and again on the first publish after it closed. A publish
/// while the server is away fails with that connection (`.connection`, `.timeout`) and the
/// caller retries when it sees fit: the client keeps no backlog of its own, so nothing
/// waits anywhere but in the caller's queue.
public final class NATSClient: Sendable {
    public let configuration: NATSConfiguration
    private let connector: OutboundConnector

    private struct State {
        var connection: NATSConnection?
        var isShutDown = false
    }
    private let state = Locked(State())

    public init(configuration: NATSConfiguration) {
        self.configuration = configuration
        connector = OutboundConnector(resolver: configuration.resolver)
    }

    /// Publishes `message` with the `Nats-Msg-Id` and other headers it holds; `completion`
    /// gets the stream's answer within `timeout`, or why there is none.
    public func publish(_ message: NATSPublish, timeout: Duration,
                        completion: @escaping @Sendable (Result<NATSPublishAnswer, NATSError>) -> Void) {
        let (connection, isNew) = state.withLock { state -> (NATSConnection?, Bool) in
            if state.isShutDown { return (nil, false) }
            if let connection = state.connection { return (connection, false) }
            let connection = NATSConnection(configuration: configuration, connector: connector) { [weak self] _ in
                self?.closed()
            }
            state.connection = connection
            return (connection, true)
        }
        guard let connection else {
            return configuration.callbackQueue.async { completion(.failure(NATSError(.shutdown, "the NATS client was shut down"))) }
        }
        if isNew { connection.open() }
        connection.publish(message, timeout: timeout, completion: completion)
    }

    /// Closes the connection; publishes in flight fail with `.shutdown`.
    public func shutdown() {
        let connection = state.withLock { state in
            state.isShutDown = true
            defer { state.connection = nil }
            return state.connection
        }
        connection?.shutdown()
    }

    /// A connection closed: the next publish opens a new one. Only one is open at a time and
    /// only the open one can close, so whichever closed is the current one.
    private func closed() {
        state.withLock { $0.connection = nil }
    }
}
