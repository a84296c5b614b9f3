import StoreRelayStorage
import StoreRelayCore

/// One event on its way to one destination, with everything an attempt sends.
package struct DeliveryJob: Sendable {
    package var notification: StoredNotification
    package var destination: String
    /// Where the event is in the journal, so a waiting job can leave its bytes there
    /// (`ParkedJob`); nil for replays of dead letters, which are not journaled.
    package var position: RecordPosition?
    /// What this destination receives, computed once for every attempt (the signature covers it).
    package var body: [UInt8]
    /// Every attempt so far, oldest first; restored from progress records after a restart.
    package var attempts: [DeliveryAttempt]
    /// When the next attempt is due.
    package var due: Timestamp
    /// The attempt budget starts here: `max-attempts` counts from it, `max-age` runs from
    /// `budgetStart` (acceptance, or the replay that gave a fresh budget).
    package var attemptsBeforeBudget: Int = 0
    package var budgetStart: Timestamp
    /// The dead letter this job replays; such jobs are not in the journal's bookkeeping.
    package var replayOf: String?
    /// With `order per-subscription`: the id of the event of the same subscription that was
    /// dead-lettered just before this one went (`StoreRelay-Ordering-Gap`).
    package var orderingGap: String?
    /// The W3C `traceparent` of the attempt under way (`AttemptRunner` sets it just before
    /// the send; every attempt is a span of its own, so it is never stored or parked).
    package var traceparent: String?
    /// Sent again on an operator's request (`POST /api/events/{id}/redeliver`) after it was
    /// delivered: not in the journal's bookkeeping, and marked `StoreRelay-Redelivery: 1`.
    package var redelivery = false

    package init(notification: StoredNotification, destination: String, position: RecordPosition? = nil, body: [UInt8],
                 attempts: [DeliveryAttempt], due: Timestamp, attemptsBeforeBudget: Int = 0, budgetStart: Timestamp,
                 replayOf: String? = nil) {
        self.notification = notification
        self.destination = destination
        self.position = position
        self.body = body
        self.attempts = attempts
        self.due = due
        self.attemptsBeforeBudget = attemptsBeforeBudget
        self.budgetStart = budgetStart
        self.replayOf = replayOf
    }

    package var eventId: String { notification.id }
    /// Whether the journal's bookkeeping tracks this job: neither a dead letter's replay (its
    /// letter stays until it succeeds) nor a redelivery (the event finished long ago).
    package var isJournaled: Bool { replayOf == nil && !redelivery }
    package var attemptsInBudget: Int { attempts.count - attemptsBeforeBudget }
    /// What `order per-subscription` orders by: the event's `originalTransactionId`.
    package var subscription: String? { notification.event.originalTransactionId }
}

/// A waiting job whose event stays in the journal until it is due: its bookkeeping without
/// Apple's body and the event (about 25 KB). A destination keeps a bounded number of jobs
/// whole and parks the rest, so a backlog costs memory per event, not per byte.
struct ParkedJob: Sendable, Equatable {
    var eventId: String
    var destination: String
    var position: RecordPosition
    var attempts: [DeliveryAttempt]
    var due: Timestamp
    var attemptsBeforeBudget: Int
    var budgetStart: Timestamp
    /// Reads of its event that failed in a row (see `DestinationQueue.maxFailedReadBacks`).
    var failedReads = 0
    /// The event's `originalTransactionId`, which `order per-subscription` orders by.
    var subscription: String?
    /// See `DeliveryJob.orderingGap`.
    var orderingGap: String?

    init(eventId: String, destination: String, position: RecordPosition, attempts: [DeliveryAttempt], due: Timestamp,
         attemptsBeforeBudget: Int, budgetStart: Timestamp) {
        self.eventId = eventId
        self.destination = destination
        self.position = position
        self.attempts = attempts
        self.due = due
        self.attemptsBeforeBudget = attemptsBeforeBudget
        self.budgetStart = budgetStart
    }

    /// Nil for a job that cannot be parked (a replay: nothing to read it back from).
    init?(_ job: DeliveryJob) {
        guard let position = job.position, job.replayOf == nil else { return nil }
        eventId = job.eventId
        destination = job.destination
        self.position = position
        attempts = job.attempts
        due = job.due
        attemptsBeforeBudget = job.attemptsBeforeBudget
        budgetStart = job.budgetStart
        subscription = job.subscription
        orderingGap = job.orderingGap
    }

    /// The whole job again, once its event has been read back; `body` is what the
    /// destination sends for it.
    func restored(_ notification: StoredNotification, body: [UInt8]) -> DeliveryJob {
        var job = DeliveryJob(notification: notification, destination: destination, position: position, body: body,
                              attempts: attempts, due: due, attemptsBeforeBudget: attemptsBeforeBudget, budgetStart: budgetStart)
        job.orderingGap = orderingGap
        return job
    }
}

/// What a destination read of its backlog: the jobs routed to it, in journal order, and
/// where to read on.
struct BacklogRead: Sendable {
    var jobs: [DeliveryJob]
    var next: RecordPosition
    /// `next` is the journal's end: the destination has caught up.
    var atEnd: Bool
    /// The journal could not be read; nothing was taken.
    var failed = false
}

/// A job in a destination's waiting room, as a reload hands it over: whole, or parked.
enum WaitingJob: Sendable {
    case whole(DeliveryJob)
    case parked(ParkedJob)
}
