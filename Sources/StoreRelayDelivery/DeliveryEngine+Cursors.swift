import Dispatch
import StoreRelayStorage
import StoreRelayCore

extension DeliveryEngine {
    /// Delivers a notification the journal just stored at `position` (its record ends at
    /// `end`): each destination takes it at once when caught up, or reads it from the
    /// journal when its turn comes; events no destination takes get their dead letter now.
    public func submit(_ notification: StoredNotification, position: RecordPosition, end: RecordPosition) {
        let topology = topology.current
        let letters = routerLetters(for: notification) { topology.queues[$0] != nil }
        let offers = letters.contains { $0.key.isEmpty } ? [] : notification.destinations.compactMap { topology.queues[$0] }
        books.withLock { books in
            books.router.reached = max(books.router.reached, end)
            if !letters.isEmpty { books.router.pending[position, default: 0] += letters.count }
        }
        let delivered = letters.contains { $0.key.isEmpty } ? [] : notification.destinations
        ledger.withLock { $0.record(notification, position: position, destinations: delivered) }
        eventLog?.append { EventSummary(notification: notification, destinations: delivered) }
        for queue in offers { queue.offer(notification, at: position, end: end) }
        for letter in letters {
            writeDeadLetter(notification, key: letter.key, destination: letter.destination, reason: letter.reason,
                            detail: letter.detail, attempts: [], replayOf: nil, routerLetterAt: position)
        }
    }

    /// The dead letters `notification` gets at once, from the router: unrouted or
    /// quarantined, or routed to a destination that `delivers` says nothing takes any more.
    func routerLetters(for notification: StoredNotification, delivers: (String) -> Bool) -> [RouterLetter] {
        switch notification.disposition {
        case .quarantine(let reason):
            return [RouterLetter(key: "", destination: nil, reason: .quarantined, detail: reason)]
        case .accept where notification.destinations.isEmpty:
            return [RouterLetter(key: "", destination: nil, reason: .unrouted, detail: Self.noRouteDetail(notification))]
        case .accept:
            return notification.destinations.filter { !delivers($0) }.map { name in
                RouterLetter(key: name, destination: name, reason: .unrouted, detail: "destination \(name) is no longer configured")
            }
        }
    }

    // MARK: Cursors

    /// The keeper of destination `name`'s book, while it has one.
    func keeper(of name: String) -> BookKeeper? { books.withLock { $0.destinations[name] } }

    /// Reads the events routed to `name` from `cursor` on, up to `room` of them or a few MiB
    /// of journal, on the reader's queue. Progress the start-up replay found for them is
    /// applied: a finished one is skipped, a retried one keeps its attempts and due time.
    func readBacklog(of name: String, from cursor: RecordPosition, room: Int,
                     completion: @escaping @Sendable (BacklogRead) -> Void) {
        backlogQueue.async { [self] in completion(readBacklogNow(of: name, from: cursor, room: room)) }
    }

    /// `readBacklog`, on the calling queue (which may block).
    func readBacklogNow(of name: String, from cursor: RecordPosition, room: Int) -> BacklogRead {
        var read = BacklogRead(jobs: [], next: cursor, atEnd: false)
        var bytes = 0
        do throws(StorageError) {
            let stopped = try journal.forEachRecord(from: cursor, budget: 256 * 1024) { record in
                bytes += record.payload.count
                read.next = record.end
                if let job = job(for: name, from: record) { read.jobs.append(job) }
                return read.jobs.count < room && bytes < Self.backlogReadBytes
            }
            (read.next, read.atEnd) = stopped
        } catch {
            logger.error("destination backlog not read from the journal; trying again shortly",
                         [("destination", name), ("position", read.next.description), ("error", "\(error)")])
            if read.jobs.isEmpty { read.failed = true }
        }
        return read
    }

    /// Journal reads of one backlog pass stop after about this many bytes, so one destination
    /// skipping over others' events does not hold the reader for long.
    static var backlogReadBytes: Int { 8 << 20 }

    /// The job `record` makes for destination `name`, if it is an event routed there and not
    /// finished by progress the start-up replay found.
    private func job(for name: String, from record: JournalRecord) -> DeliveryJob? {
        guard record.kind == .event, let notification = StoredNotification(decoding: record.payload), notification.id == record.id,
              case .accept = notification.disposition, notification.destinations.contains(name) else { return nil }
        let replayed = keeper(of: name)?.takeReplayed(at: record.position)
        if replayed?.finished == true { return nil }
        return DeliveryJob(notification: notification, destination: name, position: record.position, body: [],
                           attempts: replayed?.attempts ?? [], due: replayed?.nextAttempt ?? clock.now(),
                           budgetStart: notification.receivedAt)
    }

    /// The delivery of the job at `position` to `destination` is finished (its dead letter
    /// written; a queue marks its deliveries itself).
    func finished(_ destination: String, at position: RecordPosition?) {
        keeper(of: destination)?.finished(at: position)
    }
}

/// A dead letter the router writes for an event: `key` is the destination, or "" for an
/// unrouted or quarantined event.
struct RouterLetter {
    var key: String
    var destination: String?
    var reason: DeadLetter.Reason
    var detail: String
}
