import Dispatch
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// Makes one attempt at handing an event to a destination. Drivers hold no per-event state;
/// `DestinationQueue` decides when to call them.
package protocol DeliveryDriver: Sendable {
    /// Attempts in flight at once; beyond it, events wait in the destination's queue.
    var concurrency: Int { get }
    /// What this destination receives for `notification`, the same bytes on every attempt.
    func body(for notification: StoredNotification) -> [UInt8]
    func attempt(_ job: DeliveryJob, number: Int, completion: @escaping @Sendable (AttemptOutcome) -> Void)
    /// Releases connections or files; the driver is not used afterwards.
    func close(completion: @escaping @Sendable () -> Void)
}

/// POSTs to a webhook and classifies the answer as SPEC "Delivery to webhooks" says.
struct WebhookDriver: DeliveryDriver {
    let request: WebhookRequest
    let client: HTTPClient
    let clock: any TimeSource

    package var concurrency: Int { request.options.concurrency }

    package func body(for notification: StoredNotification) -> [UInt8] { request.body(for: notification) }

    package func attempt(_ job: DeliveryJob, number: Int, completion: @escaping @Sendable (AttemptOutcome) -> Void) {
        let started = clock.now()
        if let unsendable = WebhookRequest.unsendableField(of: job.notification.event) {
            return completion(.unsendable(DeliveryAttempt(at: started, error: unsendable, durationMs: 0)))
        }
        let startedNanos = MonotonicClock.nanoseconds()
        let outgoing = request.request(for: job.notification, body: job.body, attempt: number, now: started)
        client.execute(outgoing, timeout: request.options.timeout) { [clock] result in
            let duration = Int64((MonotonicClock.nanoseconds() - startedNanos) / 1_000_000)
            completion(Self.classify(result, started: started, durationMs: duration, now: clock.now()))
        }
    }

    static func classify(
        _ result: Result<HTTPClientResponse, HTTPClientError>, started: Timestamp, durationMs: Int64, now: Timestamp
    ) -> AttemptOutcome {
        switch result {
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

    package func close(completion: @escaping @Sendable () -> Void) { completion() }
}

/// Appends the normalized event as one line of a file queue; delivered once fsync'ed.
struct FileQueueDriver: DeliveryDriver {
    let queue: FileQueue
    let clock: any TimeSource

    /// The file queue group-commits whatever is appended at once, so many may be in flight.
    package var concurrency: Int { 256 }

    package func body(for notification: StoredNotification) -> [UInt8] { notification.event.jsonBytes() }

    package func attempt(_ job: DeliveryJob, number: Int, completion: @escaping @Sendable (AttemptOutcome) -> Void) {
        let started = clock.now()
        let startedNanos = MonotonicClock.nanoseconds()
        queue.append(line: job.body) { result in
            let duration = Int64((MonotonicClock.nanoseconds() - startedNanos) / 1_000_000)
            switch result {
            case .success:
                completion(.delivered(DeliveryAttempt(at: started, durationMs: duration)))
            case .failure(let error):
                completion(.retry(DeliveryAttempt(at: started, error: error.message, durationMs: duration), retryAfter: nil))
            }
        }
    }

    package func close(completion: @escaping @Sendable () -> Void) {
        queue.close { _ in completion() }
    }
}

extension String {
    /// Control characters (newlines in an error body, say) as spaces, for one-line messages.
    func replacingControlCharacters() -> String {
        String(unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? " " : Character($0) })
    }
}
