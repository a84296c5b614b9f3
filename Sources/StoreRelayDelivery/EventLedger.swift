import StoreRelaySupport

/// Where each delivery of recent events stands, for `/api/events/{id}`: every unfinished
/// event, and the most recently finished ones up to `capacity`. Apple's body is not kept here
/// (the event is): memory stays bounded under load.
struct EventLedger: Sendable {
    private var events: [String: EventDeliveryState] = [:]
    /// Ids of finished events in the order they finished, for forgetting the oldest. An id
    /// may appear twice (replayed, finished again); only a finished event is ever forgotten.
    private var finishedOrder: [String] = []
    private var finishedStart = 0
    let capacity: Int

    init(capacity: Int = 2_000) { self.capacity = capacity }

    func state(of id: String) -> EventDeliveryState? { events[id] }

    mutating func record(_ notification: StoredNotification, destinations: [String]) {
        var summary = notification
        summary.body = []
        var state = events[notification.id] ?? EventDeliveryState(notification: summary, deliveries: [])
        for name in destinations where !state.deliveries.contains(where: { $0.destination == name }) {
            state.deliveries.append(.init(destination: name, phase: .pending, attempts: [], nextAttempt: nil, deadLetterId: nil))
        }
        events[notification.id] = state
        if Self.isFinished(state) { finished(notification.id) }
    }

    mutating func update(_ eventId: String, destination: String, _ change: (inout EventDeliveryState.Delivery) -> Void) {
        guard var state = events[eventId], let index = state.deliveries.firstIndex(where: { $0.destination == destination })
        else { return }
        let wasFinished = Self.isFinished(state)
        change(&state.deliveries[index])
        events[eventId] = state
        if !wasFinished && Self.isFinished(state) { finished(eventId) }
    }

    private static func isFinished(_ state: EventDeliveryState) -> Bool {
        !state.deliveries.contains { $0.phase == .pending }
    }

    /// Remembers `id` as the newest finished event and forgets the oldest beyond `capacity`.
    private mutating func finished(_ id: String) {
        finishedOrder.append(id)
        while finishedOrder.count - finishedStart > capacity {
            let oldest = finishedOrder[finishedStart]
            finishedStart += 1
            if let state = events[oldest], Self.isFinished(state) { events[oldest] = nil }
        }
        if finishedStart > 4096 && finishedStart * 2 > finishedOrder.count {
            finishedOrder.removeFirst(finishedStart)
            finishedStart = 0
        }
    }
}
