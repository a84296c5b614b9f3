import StoreRelayStorage
import StoreRelayCore

/// Appends the normalized event as one line of a file queue; delivered once fsync'ed
/// (SPEC "File queues").
struct FileQueueKind: DestinationKind {
    static let name = "file"

    let queue: FileQueue

    /// The file queue group-commits whatever is appended at once, so many may be in flight.
    var concurrency: Int { 256 }

    func prepare(_ notification: StoredNotification) -> [UInt8] { notification.event.jsonBytes() }

    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        queue.append(line: job.body, completion: answer)
    }

    /// Only the disk fails a file queue: every failure is worth another try.
    func classify(_ answer: Result<Void, StorageError>, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        switch answer {
        case .success:
            .delivered(DeliveryAttempt(at: started, durationMs: durationMs))
        case .failure(let error):
            .retry(DeliveryAttempt(at: started, error: error.message, durationMs: durationMs), retryAfter: nil)
        }
    }

    func close(completion: @escaping @Sendable () -> Void) {
        queue.close { _ in completion() }
    }
}
