public import StoreRelayNet

/// How a NATS JetStream destination is delivered to (`destination NAME nats URL { ... }`): one
/// publish per event with `Nats-Msg-Id` = the event id, delivered once the stream's PubAck
/// arrives.
public struct NATSOptions: Sendable, Hashable {
    /// The server; `tls://` insists on TLS.
    public var url: NATSURL
    /// The subject, placeholders filled per event; default `appstore.{environment}.{type}`.
    public var subject: NATSOptions.Subject = .init(template: Self.defaultSubject)
    /// `user` and `password` (both or neither), or `token`: how CONNECT authenticates.
    public var user: String?
    public var password: ConfigSecret?
    public var token: ConfigSecret?
    /// A PEM file of CAs trusted besides the system store, as written.
    public var caFile: String?
    /// Body format, timeout, concurrency and retry limits, as for every kind.
    public var delivery = DeliveryOptions()

    public init(url: NATSURL) { self.url = url }

    /// A subject template checked against NATS's rules for publishing: dot-separated tokens,
    /// none empty, no wildcard, no white space.
    public struct Subject: Sendable, Hashable, CustomStringConvertible {
        public let template: NameTemplate
        init(template: NameTemplate) { self.template = template }
        public var description: String { template.description }

        static func parse(_ text: String) throws(ConfigValueError) -> Subject {
            let template = try NameTemplate(parsing: text)
            // Placeholders stand for non-empty words, so checking the literal with each
            // placeholder as `x` checks every expansion's shape.
            let sample = template.expand { _ in "x" }
            if let problem = NATSSubject.problem(sample) {
                throw ConfigValueError("'\(text)' is not a NATS subject: \(problem) (expected tokens separated by '.', e.g. appstore.{environment}.{type})")
            }
            return Subject(template: template)
        }
    }

    static let defaultSubject = try! NameTemplate(parsing: "appstore.{environment}.{type}")
}
