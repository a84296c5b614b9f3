import Dispatch
import StoreRelayStorage
import StoreRelayCore

/// Runs one destination's attempts, the same way for the journal-backed queue
/// (`DestinationQueue`) and the cluster-backed one: it sends through the destination's kind,
/// times the attempt, holds the breaker, the concurrency slots and the last success and
/// error, and turns each outcome into a verdict (delivered, retry at a due time, dead letter)
/// by the attempt budget. Its owner decides where jobs wait and how a verdict is written down.
///
/// The invariant behind `@unchecked Sendable`: its mutable state (`state`) is confined to its
/// owner's serial queue, `queue`; every method that touches it is called there, and
/// `attempt`'s completion runs there too. `kindName`, `limits` and `prepare` read only
/// immutable values and may be used from any thread.
package final class AttemptRunner: @unchecked Sendable {
    package let destination: String
    /// The kind's name (`webhook`, `file`), for status listings.
    package let kindName: String
    /// Read from any thread (a replay's marker lifetime): a copy outside `state`.
    package let limits: DeliveryLimits
    private let kind: any DestinationKind
    private let clock: any TimeSource
    private let observer: any DeliveryObserver
    private let logger: Logger
    private let queue: DispatchQueue
    private var state: State

    package init(destination: String, setup: DestinationSetup, queue: DispatchQueue, clock: any TimeSource,
                 observer: any DeliveryObserver, logger: Logger) {
        self.destination = destination
        kindName = setup.kindName
        kind = setup.kind
        limits = setup.limits
        self.queue = queue
        self.clock = clock
        self.observer = observer
        self.logger = logger
        state = State(limits: setup.limits, concurrency: setup.kind.concurrency)
    }

    package var concurrency: Int { state.concurrency }
    package var inFlight: Int { state.inFlight }
    /// Concurrency slots free.
    package var room: Int { state.room }
    package var breaker: CircuitBreaker.State { state.breaker.state }
    /// While the breaker is open: when its probe may go out.
    package var openUntil: Timestamp? { state.breaker.openUntil }

    /// What this destination receives for `notification` (kept in `DeliveryJob.body`).
    package func prepare(_ notification: StoredNotification) -> [UInt8] { kind.prepare(notification) }

    /// `count` jobs take a slot for one attempt each, spending as many tokens of the `rate`.
    package func take(_ count: Int = 1) { state.take(count, at: clock.now()) }
    package func release(_ count: Int = 1) { state.release(count) }
    package func allowsAttempt(at now: Timestamp) -> Bool { state.allowsAttempt(at: now) }
    package func cancelProbe() { state.cancelProbe() }
    /// Paused by an operator: `allowsAttempt` says no, and the owner reads nothing new.
    package var isPaused: Bool { state.paused }
    /// Pauses or resumes; false when it already was so. Called on `queue`.
    package func setPaused(_ paused: Bool) -> Bool {
        dispatchPrecondition(condition: .onQueue(queue))
        return state.setPaused(paused, at: clock.now())
    }
    /// Attempts the `rate` lets start at `now` (`Int.max` without one).
    package func rateRoom(at now: Timestamp) -> Int { state.rateRoom(at: now) }
    /// When the `rate` lets the next attempt start; nil when it does now or there is none:
    /// the owner's timer waits for it.
    package func nextToken(at now: Timestamp) -> Timestamp? { state.nextToken(at: now) }

    /// The dead-letter verdict on `job` when its `max-age` has passed; nil while it may go.
    package func expired(_ job: DeliveryJob, now: Timestamp) -> AttemptVerdict? { state.expired(job, now: now) }

    /// Makes the next attempt at `job` (its number follows the attempts so far); `completion`
    /// gets the outcome on `queue`. An event the kind can never send is not sent: it comes
    /// back `unsendable` at once. Takes no slot: the owner holds one for the job.
    package func attempt(_ job: DeliveryJob, completion: @escaping @Sendable (AttemptOutcome) -> Void) {
        let started = clock.now()
        if let why = kind.unsendable(job.notification) {
            let outcome = AttemptOutcome.unsendable(DeliveryAttempt(at: started, error: why, durationMs: 0))
            return queue.async { completion(outcome) }
        }
        send(kind, job, started: started) { [queue] outcome in queue.async { completion(outcome) } }
    }

    /// Opens the kind's existential, so its `Answer` type reaches `classify` unchanged. The
    /// attempt is a span of the event's trace, a child of its receive span: its id travels
    /// as the `traceparent` of what is sent, and the observer gets the span when it ends.
    private func send<Kind: DestinationKind>(_ kind: Kind, _ job: DeliveryJob, started: Timestamp,
                                             completion: @escaping @Sendable (AttemptOutcome) -> Void) {
        let startedNanos = MonotonicClock.nanoseconds()
        let span = AttemptSpan(job: job, destination: destination, kindName: kindName)
        var job = job
        job.traceparent = span.traceparent
        kind.send(job, attempt: span.number, now: started) { [clock, observer] answer in
            let duration = Int64((MonotonicClock.nanoseconds() - startedNanos) / 1_000_000)
            let outcome = kind.classify(answer, started: started, durationMs: duration, now: clock.now())
            observer.traced(span.finished(outcome))
            completion(outcome)
        }
    }

    /// Records how `job`'s attempt ended and says what follows. Every attempt is counted
    /// once in the metrics; a retry is logged here, a dead letter by whoever writes it.
    package func settle(_ job: DeliveryJob, _ outcome: AttemptOutcome) -> AttemptVerdict {
        dispatchPrecondition(condition: .onQueue(queue))
        let before = state.breaker.state
        let (verdict, label) = state.settle(job, outcome, now: clock.now())
        let attempt = outcome.attempt
        observer.attemptFinished(destination: destination, outcome: label, seconds: Double(attempt.durationMs) / 1000)
        let after = state.breaker.state
        if before == .closed, after == .open {
            observer.breakerChanged(destination: destination, open: true, error: attempt.error)
        } else if before != .closed, after == .closed {
            observer.breakerChanged(destination: destination, open: false, error: nil)
        }
        if case .retry(let job, _) = verdict {
            var fields: Logger.Metadata = [
                ("event.id", job.eventId), ("original.transaction.id", job.subscription ?? ""), ("destination", destination),
                ("attempt", job.attempts.count),
            ]
            // No status when nothing answered (a refused connection): absent, not a made-up 0.
            if let status = attempt.status { fields.append(("status", status)) }
            fields += [("error", attempt.error ?? ""), ("duration.ms", attempt.durationMs), ("next", job.due.iso8601)]
            logger.info("delivery attempt failed", fields)
        }
        return verdict
    }

    /// What status pages show, with what waits in the owner's queue.
    package func status(queueDepth: Int, parked: Int) -> DestinationStatus {
        state.status(name: destination, kind: kindName, queueDepth: queueDepth, parked: parked)
    }

    /// Closes the kind (connections, files); no attempt follows.
    package func close(completion: @escaping @Sendable () -> Void) { kind.close(completion: completion) }
}
