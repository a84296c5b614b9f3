import StoreRelayStorage
import StoreRelayCore

/// One kind of destination (`webhook`, `file`): how an event becomes this destination's
/// message, how the message is handed over once, and what the answer means. A kind holds no
/// per-event state and decides nothing about when or how often: `AttemptRunner` does that
/// the same way for every kind, in single-node and cluster mode alike, so a new kind is one
/// small type that conforms here and one case in `DestinationSetup`.
package protocol DestinationKind: Sendable {
    /// What one send comes back with (a response, an error), before it is classified.
    associatedtype Answer: Sendable

    /// `webhook`, `file`...: the `kind` of status listings and metrics.
    static var name: String { get }

    /// Attempts in flight at once; beyond it, events wait in the destination's queue.
    var concurrency: Int { get }

    /// The bytes this destination receives for `notification`, the same on every attempt
    /// (a webhook's signature covers them): computed once, kept in `DeliveryJob.body`.
    func prepare(_ notification: StoredNotification) -> [UInt8]

    /// Why `notification` can never be sent here, however often it is tried (said in a
    /// sentence for the dead letter); nil when it can. Checked before every send.
    func unsendable(_ notification: StoredNotification) -> String?

    /// Hands `job`'s prepared body over once, as attempt number `attempt` (1 for the first);
    /// `answer` runs exactly once, on any thread.
    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Answer) -> Void)

    /// What `answer` means (SPEC's rules for this kind): delivered, retried (no sooner than a
    /// `Retry-After` the destination asked for), or rejected. Pure: no I/O, no state.
    func classify(_ answer: Answer, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome

    /// Releases connections or files; the kind is not used afterwards.
    func close(completion: @escaping @Sendable () -> Void)
}

extension DestinationKind {
    package func unsendable(_ notification: StoredNotification) -> String? { nil }
}
