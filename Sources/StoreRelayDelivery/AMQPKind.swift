import StoreRelayConfig
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// Publishes to an AMQP 0-9-1 exchange (SPEC "Destinations beyond webhooks"): the body a
/// webhook would receive, persistent, `message-id` = event id, the metadata as headers, the
/// routing key filled in per event. Delivered once the broker confirms (Basic.Ack); a Nack,
/// a return (no queue bound for the key) or a lasting close (no such exchange, access refused)
/// is a refusal; an unreachable broker, a forced close or no confirmation in time is retried.
struct AMQPKind: DestinationKind {
    static let name = "amqp"

    let options: AMQPOptions
    let publisher: AMQPPublisher

    init(options: AMQPOptions, logger: Logger) {
        self.options = options
        var configuration = AMQPConfiguration(url: options.url)
        configuration.caFile = options.caFile
        configuration.connectTimeout = options.delivery.timeout
        configuration.publishTimeout = options.delivery.timeout
        configuration.heartbeat = options.heartbeat
        configuration.logger = logger
        publisher = AMQPPublisher(configuration: configuration)
    }

    var concurrency: Int { options.delivery.concurrency }

    func prepare(_ notification: StoredNotification) -> [UInt8] { EventMessage.body(for: notification, options.delivery) }

    /// A routing key travels as a short string: one longer than 255 bytes (a huge bundle id
    /// in a placeholder) would be refused on every attempt.
    func unsendable(_ notification: StoredNotification) -> String? {
        let key = options.routingKey.expand(for: notification.event)
        guard key.utf8.count > 255 else { return nil }
        return "the routing key for this event is \(key.utf8.count) bytes long; AMQP allows at most 255"
    }

    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Result<Void, AMQPError>) -> Void) {
        let event = job.notification.event
        let message = AMQPMessage(
            exchange: options.exchange, routingKey: options.routingKey.expand(for: event), messageId: event.id,
            contentType: "application/json",
            headers: EventMessage.metadata(for: job).map { AMQPMessage.Header(name: $0.name, value: $0.value) },
            body: job.body)
        publisher.publish(message, completion: answer)
    }

    func classify(_ answer: Result<Void, AMQPError>, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        switch answer {
        case .success:
            return .delivered(DeliveryAttempt(at: started, durationMs: durationMs))
        case .failure(let error):
            let attempt = DeliveryAttempt(at: started, error: error.message, durationMs: durationMs)
            return error.code == .refused ? .reject(attempt) : .retry(attempt, retryAfter: nil)
        }
    }

    func close(completion: @escaping @Sendable () -> Void) {
        publisher.shutdown(completion: completion)
    }
}
