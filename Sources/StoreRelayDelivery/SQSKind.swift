import StoreRelayAWS
import StoreRelayConfig
import StoreRelayCrypto
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// Sends to an Amazon SQS queue (SPEC "Destinations beyond webhooks"): the body a webhook
/// would receive as MessageBody, the metadata as String message attributes, and for a FIFO
/// queue `MessageGroupId` = originalTransactionId and `MessageDeduplicationId` = event id.
/// Delivered on HTTP 200; throttling, 429 and 5xx are retried, like an unreachable endpoint;
/// any other error (no such queue, access denied, an invalid parameter) is a refusal.
///
/// An event without an originalTransactionId (a TEST notification, a summary) is grouped by
/// its own id: such events are not ordered relative to each other, as `order per-subscription`
/// does not order them either, and no group of unrelated events holds the others back.
struct SQSKind: DestinationKind {
    static let name = "sqs"

    let options: SQSOptions
    let client: SQSClient

    /// SendMessage's limit on a message, body and attributes together.
    static let maxMessageBytes = 262_144

    init(options: SQSOptions, client: HTTPClient) {
        self.options = options
        let credentials = AWSCredentials(
            accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey.value, sessionToken: options.sessionToken?.value)
        self.client = SQSClient(queueURL: options.queueURL, endpoint: options.endpoint, region: options.region,
                                credentials: credentials, caFile: options.caFile, client: client)
    }

    var concurrency: Int { options.delivery.concurrency }

    func prepare(_ notification: StoredNotification) -> [UInt8] { EventMessage.body(for: notification, options.delivery) }

    func unsendable(_ notification: StoredNotification) -> String? {
        let size = EventMessage.body(for: notification, options.delivery).count
            + EventMessage.metadata(notification.event).reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 6 }
            + EventMessage.traceparentFieldBytes + 6
        guard size > Self.maxMessageBytes else { return nil }
        return "the message is \(size) bytes; SQS takes at most \(Self.maxMessageBytes)"
    }

    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Result<SQSAnswer, HTTPClientError>) -> Void) {
        client.send(message(for: job), timeout: options.delivery.timeout, at: now, completion: answer)
    }

    func message(for job: DeliveryJob) -> SQSMessage {
        let event = job.notification.event
        var message = SQSMessage(
            body: String(decoding: job.body, as: UTF8.self),
            attributes: EventMessage.metadata(for: job).map { (name: $0.name, value: $0.value) })
        if client.isFIFO {
            message.groupId = Self.fifoId(event.originalTransactionId ?? event.id)
            message.deduplicationId = Self.fifoId(event.id)
        }
        return message
    }

    /// `text` when SQS accepts it as a group or deduplication id (128 printable ASCII
    /// characters), else its SHA-256 in hex: the same text always gives the same id.
    static func fifoId(_ text: String) -> String {
        SQSMessage.isValidFIFOId(text) ? text : SHA256.hexHash(Array(text.utf8))
    }

    func classify(_ answer: Result<SQSAnswer, HTTPClientError>, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        switch answer {
        case .failure(let error):
            return .retry(DeliveryAttempt(at: started, error: "\(error.code): \(error.message)", durationMs: durationMs), retryAfter: nil)
        case .success(let response):
            switch response.verdict {
            case .delivered:
                return .delivered(DeliveryAttempt(at: started, status: response.status, durationMs: durationMs))
            case .retry:
                return .retry(DeliveryAttempt(at: started, status: response.status, error: response.summary, durationMs: durationMs),
                              retryAfter: nil)
            case .refused:
                // No HTTP status on the attempt: the dead letter's detail names SQS's error.
                return .reject(DeliveryAttempt(at: started, error: response.summary, durationMs: durationMs))
            }
        }
    }

    func close(completion: @escaping @Sendable () -> Void) { completion() }
}
