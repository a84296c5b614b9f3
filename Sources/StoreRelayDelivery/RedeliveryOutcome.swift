/// What a request to send an already delivered event again did (`DeliveryService.redeliver`,
/// SPEC "Delivery controls", Redeliver).
public enum RedeliveryOutcome: Sendable, Equatable {
    /// Queued for the destination, with the event's own `webhook-id` and `StoreRelay-Redelivery: 1`.
    case queued
    /// The gateway holds no such event (it may be older than what it remembers).
    case unknownEvent
    /// No destination has that name.
    case unknownDestination
    /// The event's delivery to that destination has not finished: it is still on its way.
    case stillPending
    /// The event's delivery to that destination ended as a dead letter: replaying the letter
    /// is the way to send it again (it then leaves the dead-letter store).
    case deadLettered(letterId: String?)
    /// The destination sends Apple's body (`format apple` or `include-raw yes`) and the
    /// gateway no longer holds it for this event.
    case bodyNoLongerHeld
    /// Quarantined or not understood: nothing was delivered, so there is nothing to send again.
    case notDeliverable(String)
    /// The redelivery could not be queued (cluster server unreachable, ...).
    case failed(String)
}
