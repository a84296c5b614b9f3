/// One downstream that routes can name.
public struct DestinationConfiguration: Sendable, Hashable {
    /// What the destination is and how to deliver to it.
    public enum Kind: Sendable, Hashable {
        /// HTTP POST to a URL, with retries.
        case webhook(WebhookOptions)
        /// Append to JSON-lines segments in a directory.
        case file(FileQueueOptions)
        /// `XADD` to a Redis stream.
        case redisStream(RedisStreamOptions)
        /// Publish to a NATS JetStream subject.
        case nats(NATSOptions)
        /// Publish to an AMQP 0-9-1 exchange with publisher confirms.
        case amqp(AMQPOptions)
        /// SendMessage to an Amazon SQS queue, signed with SigV4.
        case sqs(SQSOptions)
    }

    /// The name routes use; letters, digits, `-`, `_`, `.` (safe in file names and metric labels).
    public var name: String
    /// The kind and its options.
    public var kind: Kind

    /// The common delivery options of a kind that has them (a file queue has none).
    public var delivery: DeliveryOptions? {
        switch kind {
        case .webhook(let options): options.delivery
        case .redisStream(let options): options.delivery
        case .nats(let options): options.delivery
        case .amqp(let options): options.delivery
        case .sqs(let options): options.delivery
        case .file: nil
        }
    }

    public init(name: String, kind: Kind) {
        self.name = name
        self.kind = kind
    }
}
