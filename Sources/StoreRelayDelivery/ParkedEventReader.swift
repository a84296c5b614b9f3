import Dispatch
import StoreRelayStorage
import StoreRelayCore

/// Reads events back from the journal: parked jobs when they come due, and unfinished
/// events the admin API asks for.
///
/// Reads block (`pread`), so `read` runs them on a serial queue of its own, never on the
/// delivery pool. The destinations of one event usually come due together, so the last
/// events read are kept: a notification routed to four webhooks is read and decoded once.
final class ParkedEventReader: Sendable {
    private let journal: Journal
    private let logger: Logger
    private let queue = DispatchQueue(label: "storerelay.delivery.reader")
    private let recent: Locked<RecentlyRead>
    private let readCount = Locked(0)

    init(journal: Journal, logger: Logger, keep: Int = 64) {
        self.journal = journal
        self.logger = logger
        recent = Locked(RecentlyRead(capacity: keep))
    }

    /// Records read from the journal so far (not counting those found among the recent ones).
    var journalReads: Int { readCount.current }

    /// Reads the event stored at `position` off the calling thread; `completion` gets nil
    /// (and the failure is logged) when the journal cannot give it back.
    func read(_ position: RecordPosition, completion: @escaping @Sendable (StoredNotification?) -> Void) {
        queue.async { completion(self.readNow(position)) }
    }

    /// Reads the event stored at `position` on the calling thread, which may block.
    func readNow(_ position: RecordPosition) -> StoredNotification? {
        do {
            return try readOrThrow(position)
        } catch {
            logger.error("event not read back from the journal", [("position", position.description), ("error", "\(error)")])
            return nil
        }
    }

    /// The event at `position`; nil when the record there is not a stored notification
    /// (logged); throws when the journal cannot be read.
    private func readOrThrow(_ position: RecordPosition) throws(StorageError) -> StoredNotification? {
        if let event = recent.withLock({ $0[position] }) { return event }
        readCount.withLock { $0 += 1 }
        let record = try journal.record(at: position)
        guard record.kind == .event, let event = StoredNotification(decoding: record.payload), event.id == record.id else {
            logger.error("journal record is not a stored notification", [("position", position.description)])
            return nil
        }
        recent.withLock { $0.remember(event, at: position) }
        return event
    }
}

/// The last few events read, by position, oldest forgotten first.
struct RecentlyRead: Sendable {
    private var events: [RecordPosition: StoredNotification] = [:]
    private var order: [RecordPosition] = []
    private var oldest = 0
    let capacity: Int

    init(capacity: Int) { self.capacity = max(1, capacity) }

    subscript(position: RecordPosition) -> StoredNotification? { events[position] }

    mutating func remember(_ event: StoredNotification, at position: RecordPosition) {
        guard events.updateValue(event, forKey: position) == nil else { return }
        if order.count < capacity {
            order.append(position)
        } else {
            events[order[oldest]] = nil
            order[oldest] = position
            oldest = (oldest + 1) % capacity
        }
    }
}
