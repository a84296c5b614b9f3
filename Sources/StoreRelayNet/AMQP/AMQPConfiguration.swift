public import Dispatch
public import StoreRelayCore

/// How an `AMQPPublisher` reaches its broker and how long it waits.
public struct AMQPConfiguration: Sendable {
    public var url: AMQPURL
    /// A PEM file of CAs trusted for `amqps://` besides the system store.
    public var caFile: String?
    /// Resolution, connect, TLS and the AMQP handshake, together.
    public var connectTimeout: Duration = .seconds(10)
    /// From a publish to its confirmation.
    public var publishTimeout: Duration = .seconds(10)
    /// The heartbeat interval the client asks for (a broker asking for less gets less; 0 turns
    /// heartbeats off, as TuneOk may). Heartbeats are honoured: one goes out when nothing else
    /// did for half the interval, and a broker silent for two intervals is taken for gone, so
    /// an idle connection through a NAT or a dead broker is noticed before the next publish
    /// waits a whole timeout on it.
    public var heartbeat: Duration = .seconds(30)
    /// The largest frame the client accepts and sends (the broker may ask for less).
    public var maxFrameSize: Int = 131_072
    /// The `product` client property: how the connection is named in the broker's UI.
    public var product = "StoreRelay"
    public var logger: Logger = .disabled
    /// Where completions run.
    public var callbackQueue: DispatchQueue = .deliveryWork

    public init(url: AMQPURL) { self.url = url }
}
