import StoreRelayConfig
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// POSTs to a webhook and classifies the answer as SPEC "Delivery to webhooks" says.
struct WebhookKind: DestinationKind {
    static let name = "webhook"

    let request: WebhookRequest
    let client: HTTPClient

    var concurrency: Int { request.options.delivery.concurrency }

    func prepare(_ notification: StoredNotification) -> [UInt8] { request.body(for: notification) }

    /// A header-bound field holding a byte HTTP forbids would fail every attempt the same way.
    func unsendable(_ notification: StoredNotification) -> String? {
        WebhookRequest.unsendableField(of: notification.event)
    }

    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp,
              answer: @escaping @Sendable (Result<HTTPClientResponse, HTTPClientError>) -> Void) {
        let outgoing = request.request(for: job.notification, body: job.body, attempt: attempt, now: now,
                                       orderingGap: job.orderingGap, traceparent: job.traceparent, redelivery: job.redelivery)
        client.execute(outgoing, timeout: request.options.delivery.timeout, completion: answer)
    }

    func classify(_ answer: Result<HTTPClientResponse, HTTPClientError>, started: Timestamp, durationMs: Int64,
                  now: Timestamp) -> AttemptOutcome {
        switch answer {
        case .failure(let error):
            return .retry(DeliveryAttempt(at: started, error: "\(error.code): \(error.message)", durationMs: durationMs),
                          retryAfter: nil)
        case .success(let response):
            let status = response.status
            if (200..<300).contains(status) {
                return .delivered(DeliveryAttempt(at: started, status: status, durationMs: durationMs))
            }
            let attempt = DeliveryAttempt(at: started, status: status, error: Self.describe(response), durationMs: durationMs)
            if [408, 425, 429].contains(status) || (500..<600).contains(status) {
                return .retry(attempt, retryAfter: RetryAfter.parse(response.headers["Retry-After"], now: now))
            }
            return .reject(attempt)
        }
    }

    /// `HTTP 503 Service Unavailable: <start of the body>`, for the operator reading a dead letter.
    private static func describe(_ response: HTTPClientResponse) -> String {
        var text = "HTTP \(response.status)"
        if !response.reason.isEmpty { text += " \(response.reason)" }
        let snippet = String(decoding: response.body.prefix(200), as: UTF8.self)
            .replacingControlCharacters()
        if !snippet.isEmpty { text += ": " + snippet }
        return text
    }

    func close(completion: @escaping @Sendable () -> Void) { completion() }
}

extension String {
    /// Control characters (newlines in an error body, say) as spaces, for one-line messages.
    func replacingControlCharacters() -> String {
        String(unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}
