import StoreRelaySupport

/// Where each delivery of recent events stands, for `/api/events/{id}`: every unfinished
/// event, and the most recent finished ones up to `capacity`. Apple's body is not kept here
/// (the event is): memory stays bounded under load.
struct EventLedger: Sendable {
    private var events: [String: EventDeliveryState] = [:]
    /// Event ids in the order they were recorded, for evicting the oldest finished ones.
    private var order: [String] = []
    private var orderStart = 0
    let capacity: Int

    init(capacity: Int = 2_000) { self.capacity = capacity }

    func state(of id: String) -> EventDeliveryState? { events[id] }

    mutating func record(_ notification: StoredNotification, destinations: [String]) {
        if events[notification.id] == nil {
            order.append(notification.id)
        }
        var summary = notification
        summary.body = []
        var state = events[notification.id] ?? EventDeliveryState(notification: summary, deliveries: [])
        for name in destinations where !state.deliveries.contains(where: { $0.destination == name }) {
            state.deliveries.append(.init(destination: name, phase: .pending, attempts: [], nextAttempt: nil, deadLetterId: nil))
        }
        events[notification.id] = state
        evict()
    }

    mutating func update(_ eventId: String, destination: String, _ change: (inout EventDeliveryState.Delivery) -> Void) {
        guard var state = events[eventId], let index = state.deliveries.firstIndex(where: { $0.destination == destination })
        else { return }
        change(&state.deliveries[index])
        events[eventId] = state
    }

    /// Drops the oldest events whose deliveries have all finished while over capacity.
    private mutating func evict() {
        var budget = order.count - orderStart
        while events.count > capacity, orderStart < order.count, budget > 0 {
            budget -= 1
            let id = order[orderStart]
            orderStart += 1
            if let state = events[id], state.deliveries.contains(where: { $0.phase == .pending }) {
                order.append(id)  // still running: keep, look again later
            } else {
                events[id] = nil
            }
        }
        if orderStart > 4096 && orderStart * 2 > order.count {
            order.removeFirst(orderStart)
            orderStart = 0
        }
    }
}
