/// What one attempt means for its job once the attempt budget has had its say: the only
/// thing a destination's owner (a journal-backed `DestinationQueue` or a cluster-backed
/// queue) acts on, so both settle a delivery by the same rules.
package enum AttemptVerdict: Sendable {
    /// Delivered: the job holds every attempt, the last one the success.
    case delivered(DeliveryJob)
    /// Tried again at `job.due`; `attempt` is the one that just failed (last in the job).
    case retry(DeliveryJob, DeliveryAttempt)
    /// Given up on: rejected by the destination or unsendable, or the budget is spent
    /// (`max-attempts`, or `max-age` would pass first). `detail` says which, for the letter.
    case deadLetter(DeliveryJob, DeadLetter.Reason, detail: String)
}
