import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

/// Publishes each event to a NATS JetStream subject (SPEC "Destinations beyond webhooks"):
/// `Nats-Msg-Id` = the event id, so the stream drops a retried duplicate within its window,
/// the metadata as `StoreRelay-*` headers, the body a webhook would receive as the payload.
/// Delivered once the stream's PubAck arrives; refused (an error PubAck, no stream for the
/// subject) is rejected like a webhook's 4xx; no answer is retried.
struct NATSKind: DestinationKind {
    static let name = "nats"

    let options: NATSOptions
    let client: NATSClient

    var concurrency: Int { options.delivery.concurrency }

    /// The header each metadata field travels in.
    static let headerNames: [String: String] = [
        "id": "StoreRelay-Event-Id", "type": "StoreRelay-Type", "subtype": "StoreRelay-Subtype",
        "environment": "StoreRelay-Environment", "bundleId": "StoreRelay-Bundle-Id", "verified": "StoreRelay-Verified",
        "orderingGap": "StoreRelay-Ordering-Gap", "redelivery": "StoreRelay-Redelivery",
    ]

    func prepare(_ notification: StoredNotification) -> [UInt8] { EventMessage.body(for: notification, options.delivery) }

    /// A subject or header value that NATS cannot carry fails every attempt alike.
    func unsendable(_ notification: StoredNotification) -> String? {
        message(for: notification, body: [], attempt: 1).problem.map { "the event cannot be published to NATS: \($0)" }
    }

    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp,
              answer: @escaping @Sendable (Result<NATSPublishAnswer, NATSError>) -> Void) {
        client.publish(message(for: job.notification, body: job.body, attempt: attempt, orderingGap: job.orderingGap,
                               traceparent: job.traceparent, redelivery: job.redelivery),
                       timeout: options.delivery.timeout, completion: answer)
    }

    /// The message for `notification`: its subject expanded, `Nats-Msg-Id` first.
    func message(for notification: StoredNotification, body: [UInt8], attempt: Int, orderingGap: String? = nil,
                 traceparent: String? = nil, redelivery: Bool = false) -> NATSPublish {
        let event = notification.event
        var headers: [(name: String, value: String)] = [("Nats-Msg-Id", event.id)]
        var fields = EventMessage.metadata(event)
        if let orderingGap { fields.append(("orderingGap", orderingGap)) }
        if redelivery { fields.append(("redelivery", "1")) }
        for field in fields {
            headers.append((Self.headerNames[field.name] ?? "StoreRelay-\(field.name)", field.value))
        }
        headers.append(("StoreRelay-Attempt", String(attempt)))
        // W3C Trace Context under its own name, as NATS tracing tools look for it.
        if let traceparent { headers.append(("traceparent", traceparent)) }
        return NATSPublish(subject: options.subject.template.expand(for: event), headers: headers, payload: body)
    }

    func classify(_ answer: Result<NATSPublishAnswer, NATSError>, started: Timestamp, durationMs: Int64,
                  now: Timestamp) -> AttemptOutcome {
        switch answer {
        case .failure(let error):
            return .retry(DeliveryAttempt(at: started, error: "\(error.code): \(error.message)", durationMs: durationMs), retryAfter: nil)
        case .success(.acknowledged):
            return .delivered(DeliveryAttempt(at: started, durationMs: durationMs))
        case .success(.refused(let reason)):
            return .reject(DeliveryAttempt(at: started, error: reason, durationMs: durationMs))
        }
    }

    func close(completion: @escaping @Sendable () -> Void) {
        client.shutdown()
        completion()
    }
}

extension NATSKind {
    /// The kind for `options`; its client connects on the first publish.
    init(options: NATSOptions, logger: Logger) {
        var configuration = NATSConfiguration(url: options.url)
        configuration.user = options.user
        configuration.password = options.password?.value
        configuration.token = options.token?.value
        configuration.caFile = options.caFile
        configuration.connectTimeout = min(options.delivery.timeout, .seconds(5))
        configuration.logger = logger
        self.init(options: options, client: NATSClient(configuration: configuration))
    }
}
