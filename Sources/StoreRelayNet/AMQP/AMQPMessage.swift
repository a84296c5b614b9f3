/// One message to publish: where it goes, what it says, and the properties StoreRelay sets.
/// Always persistent (delivery-mode 2), so a durable queue keeps it across a broker restart.
public struct AMQPMessage: Sendable, Hashable {
    public var exchange: String
    public var routingKey: String
    /// The `message-id` property: the event id, so consumers can deduplicate redeliveries.
    public var messageId: String
    public var contentType: String
    /// The `headers` table, as long strings.
    public var headers: [Header]
    public var body: [UInt8]

    public struct Header: Sendable, Hashable {
        public var name: String
        public var value: String
        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(exchange: String, routingKey: String, messageId: String, contentType: String = "application/json",
                headers: [Header] = [], body: [UInt8]) {
        self.exchange = exchange
        self.routingKey = routingKey
        self.messageId = messageId
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }
}
