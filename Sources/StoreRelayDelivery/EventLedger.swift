import StoreRelayStorage
import StoreRelayCore

/// Where each delivery of recent events stands, for `/api/events/{id}`: the most recently
/// finished events up to `capacity`, and unfinished ones among the last `2 × capacity`
/// accepted. Older unfinished events wait in their destinations' backlogs, counted there.
///
/// Memory stays bounded however long a backlog grows: an unfinished event is kept as its
/// position in the journal (its record is read back when asked for), a finished one as its
/// event without Apple's body.
struct EventLedger: Sendable {
    struct Entry: Sendable {
        /// The notification without Apple's body: for finished events and replays.
        var summary: StoredNotification?
        /// Where the event is in the journal, while it is unfinished.
        var position: RecordPosition?
        var deliveries: [EventDeliveryState.Delivery]
        /// The subscription's original transaction id, for `events(ofSubscription:)`.
        var subscription: String?

        var isFinished: Bool { !deliveries.contains { $0.phase == .pending } }
    }

    private var events: [String: Entry] = [:]
    /// Event ids by original transaction id, for every event the ledger remembers.
    private var bySubscription: [String: Set<String>] = [:]
    /// Ids of finished events in the order they finished, for forgetting the oldest. An id
    /// may appear twice (replayed, finished again); only a finished event is ever forgotten.
    private var finishedOrder: [String] = []
    private var finishedStart = 0
    /// Ids in the order they were first recorded, for forgetting the oldest unfinished ones.
    private var arrivals: [String] = []
    private var arrivalsStart = 0
    let capacity: Int

    init(capacity: Int = 2_000) { self.capacity = capacity }

    func entry(of id: String) -> Entry? { events[id] }

    /// The ids of the remembered events of one subscription.
    func events(ofSubscription originalTransactionId: String) -> Set<String> {
        bySubscription[originalTransactionId] ?? []
    }

    /// Starts (or, for a replay, extends) the entry of `notification`, stored at `position`
    /// in the journal when it is there.
    mutating func record(_ notification: StoredNotification, position: RecordPosition?, destinations: [String]) {
        if events[notification.id] == nil { arrived(notification.id) }
        var entry = events[notification.id] ?? Entry(deliveries: [])
        if entry.subscription == nil, let subscription = notification.event.originalTransactionId {
            entry.subscription = subscription
            bySubscription[subscription, default: []].insert(notification.id)
        }
        if let position {
            entry.position = position
        } else if entry.summary == nil {
            entry.summary = Self.summary(of: notification)  // a replay: not in the journal
        }
        for name in destinations where !entry.deliveries.contains(where: { $0.destination == name }) {
            entry.deliveries.append(.init(destination: name, phase: .pending, attempts: [], nextAttempt: nil, deadLetterId: nil))
        }
        events[notification.id] = entry
        if entry.isFinished { finished(notification) }
    }

    /// Changes the delivery of `notification` to `destination`.
    mutating func update(_ notification: StoredNotification, destination: String,
                         _ change: (inout EventDeliveryState.Delivery) -> Void) {
        guard var entry = events[notification.id],
              let index = entry.deliveries.firstIndex(where: { $0.destination == destination })
        else { return }
        let wasFinished = entry.isFinished
        change(&entry.deliveries[index])
        events[notification.id] = entry
        if !wasFinished && entry.isFinished { finished(notification) }
    }

    /// Remembers the arrival of `id`, forgetting the oldest entries beyond twice the capacity.
    private mutating func arrived(_ id: String) {
        arrivals.append(id)
        while events.count >= 2 * max(1, capacity), arrivalsStart < arrivals.count {
            forget(arrivals[arrivalsStart])
            arrivalsStart += 1
        }
        if arrivalsStart > 4096 && arrivalsStart * 2 > arrivals.count {
            arrivals.removeFirst(arrivalsStart)
            arrivalsStart = 0
        }
    }

    private mutating func forget(_ id: String) {
        guard let forgotten = events.removeValue(forKey: id), let subscription = forgotten.subscription else { return }
        bySubscription[subscription]?.remove(id)
        if bySubscription[subscription]?.isEmpty == true { bySubscription[subscription] = nil }
    }

    private static func summary(of notification: StoredNotification) -> StoredNotification {
        var summary = notification
        summary.body = []
        return summary
    }

    /// Keeps `notification` as the newest finished event (its journal segment may be retired
    /// from now on) and forgets the oldest beyond `capacity`.
    private mutating func finished(_ notification: StoredNotification) {
        events[notification.id]?.summary = Self.summary(of: notification)
        events[notification.id]?.position = nil
        finishedOrder.append(notification.id)
        while finishedOrder.count - finishedStart > capacity {
            let oldest = finishedOrder[finishedStart]
            finishedStart += 1
            if events[oldest]?.isFinished == true { forget(oldest) }
        }
        if finishedStart > 4096 && finishedStart * 2 > finishedOrder.count {
            finishedOrder.removeFirst(finishedStart)
            finishedStart = 0
        }
    }
}
