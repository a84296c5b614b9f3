import StoreRelayStorage
import StoreRelayCore

/// One destination's place in the journal (`DestinationBook`), kept where its queue writes
/// it: the queue records what it takes into its window, what it passes over while behind,
/// each retry and each delivery as they happen; the engine's dead-letter writer marks the
/// deliveries it finished; the checkpoint reads a snapshot. The engine mirrors nothing.
///
/// One per destination name, shared by the queue a reload builds in place of another and by
/// the drain of a removed destination, so no update ever lands in a copy. Every change enters
/// here before the progress record that reports it is appended: what makes a checkpoint's
/// `journal` position true (see `DeliveryCheckpoint`).
final class BookKeeper: Sendable {
    private let book: Locked<DestinationBook>
    /// The holds of `order per-subscription`, shared for the same reason as the book.
    let order = SubscriptionOrder()

    init(_ book: DestinationBook) { self.book = Locked(book) }

    /// The book as it stands, for a checkpoint.
    var snapshot: DestinationBook { book.current }

    /// Events routed here and waiting in the journal behind the cursor (as counted).
    var backlog: Int { book.withLock { $0.backlog } }
    /// Taken and not finished.
    var unfinishedCount: Int { book.withLock { $0.unfinished.count } }
    var cursor: RecordPosition { book.withLock { $0.cursor } }

    /// Replaces the whole book with the start-up replay's.
    func reset(to fresh: DestinationBook) { book.withLock { $0 = fresh } }

    /// `jobs` were taken into the window, and reading goes on from `cursor`.
    func took(_ jobs: [DeliveryJob], cursor: RecordPosition) {
        book.withLock { book in
            book.cursor = max(book.cursor, cursor)
            for job in jobs {
                guard let position = job.position, let parked = ParkedJob(job) else { continue }
                book.unfinished[position] = parked
            }
            book.backlog = max(0, book.backlog - jobs.count)
        }
    }

    /// An event was left in the journal for a destination that is behind.
    func passed() { book.withLock { $0.backlog += 1 } }

    /// The backlog was read to the journal's end: nothing waits there any more.
    func caughtUp() {
        book.withLock { book in
            book.backlog = 0
            book.replayed = [:]
        }
    }

    /// `job` failed and waits for its next attempt (replays are not in the books: their dead
    /// letter stays until they succeed).
    func attempted(_ job: DeliveryJob) {
        guard job.isJournaled, let position = job.position else { return }
        book.withLock { book in
            book.unfinished[position]?.attempts = job.attempts
            book.unfinished[position]?.due = job.due
        }
    }

    /// The delivery of the event at `position` is finished (delivered, or its letter written).
    func finished(at position: RecordPosition?) {
        guard let position else { return }
        book.withLock { _ = $0.unfinished.removeValue(forKey: position) }
    }

    /// What the start-up replay found for the event at `position`, handed out once: the event
    /// is being read from the backlog now.
    func takeReplayed(at position: RecordPosition) -> DestinationProgress? {
        book.withLock { $0.replayed.removeValue(forKey: position) }
    }
}
