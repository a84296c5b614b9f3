import StoreRelayNet

/// How an AMQP 0-9-1 destination is published to (`destination NAME amqp URL { ... }`, SPEC
/// "Destinations beyond webhooks"): persistent messages with publisher confirms, `mandatory`
/// so that a message no queue takes is refused rather than dropped.
public struct AMQPOptions: Sendable, Hashable {
    /// The broker, credentials and virtual host; `amqps://` for TLS. Its description hides
    /// the password.
    public var url: AMQPURL
    /// The exchange every message is published to (required; `""` is the default exchange,
    /// where the routing key names the queue).
    public var exchange: String = ""
    /// The routing key, with placeholders; default `{environment}.{type}`.
    public var routingKey: NameTemplate
    /// An extra PEM CA file trusted for `amqps://`, as written.
    public var caFile: String?
    /// The heartbeat interval asked of the broker; default 30s, 0 for none.
    public var heartbeat: Duration = .seconds(30)
    /// Body format, timeout, concurrency and retry limits, as for every kind.
    public var delivery = DeliveryOptions()

    public init(url: AMQPURL) {
        self.url = url
        // A constant template: parsing it cannot fail.
        routingKey = try! NameTemplate(parsing: "{environment}.{type}")
    }
}
