import StoreRelayCore

/// Redelivery (SPEC "Delivery controls"), single-node mode: an event the gateway remembers
/// (`EventLedger`) goes to one destination again, as a job outside the journal's bookkeeping.
///
/// It is not journaled: the event finished long ago, and a redelivery is an operator's
/// request answered at once — if the gateway stops before it is sent, the operator asks
/// again. If every attempt fails it becomes a dead letter like any delivery.
extension DeliveryEngine {
    public func redeliver(eventId id: String, destination name: String) -> RedeliveryOutcome {
        guard let queue = topology.current.queues[name] else { return .unknownDestination }
        guard let entry = ledger.withLock({ $0.entry(of: id) }) else { return .unknownEvent }
        // Only where it was delivered: what never went there is not "again" (and a replay
        // is how a dead-lettered delivery is sent again).
        guard let delivery = entry.deliveries.first(where: { $0.destination == name }) else {
            return .notDeliverable("it was not routed to \(name)")
        }
        switch delivery.phase {
        case .pending: return .stillPending
        case .deadLettered: return .deadLettered(letterId: delivery.deadLetterId)
        case .delivered: break
        }
        // A finished event is held without Apple's body; an unfinished one is in the journal.
        var notification: StoredNotification
        if let summary = entry.summary {
            notification = summary
        } else if let position = entry.position, let read = reader.readNow(position), read.id == id {
            notification = read
        } else if let summary = ledger.withLock({ $0.entry(of: id)?.summary }) {
            notification = summary  // it finished between the two looks
        } else {
            return .unknownEvent
        }
        if case .quarantine(let reason) = notification.disposition { return .notDeliverable("quarantined: \(reason)") }
        let body = queue.body(for: notification)
        if notification.body.isEmpty && queue.needsAppleBody { return .bodyNoLongerHeld }

        notification.destinations = [name]
        ledger.withLock { ledger in
            ledger.record(notification, position: nil, destinations: [name])
            ledger.update(notification, destination: name) {
                $0.phase = .pending
                $0.nextAttempt = nil
            }
        }
        eventLog?.setState(.pending, eventId: id, destination: name, receivedAt: notification.receivedAt)
        let now = clock.now()
        var job = DeliveryJob(notification: notification, destination: name, body: body, attempts: [], due: now, budgetStart: now)
        job.redelivery = true
        queue.enqueue(job)
        logger.info("event redelivered", [("event.id", id), ("destination", name)])
        return .queued
    }
}
