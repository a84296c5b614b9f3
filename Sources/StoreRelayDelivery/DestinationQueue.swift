import Dispatch
import StoreRelayConfig
import StoreRelayCore

/// How long and how often a destination keeps trying (from its `routes.conf` options).
package struct DeliveryLimits: Sendable {
    package var maxAttempts: Int
    package var maxAge: Duration
    package var schedule: RetrySchedule
}

/// A point-in-time view of one destination, for status pages and metrics.
public struct DestinationStatus: Sendable {
    public var name: String
    public var kind: String
    public var queueDepth: Int
    /// Of `queueDepth`, the events waiting in the journal rather than in memory.
    public var parked: Int
    public var inFlight: Int
    public var breaker: CircuitBreaker.State
    public var lastSuccess: Timestamp?
    public var lastError: String?
    public var lastErrorAt: Timestamp?

    public init(name: String, kind: String, queueDepth: Int, parked: Int, inFlight: Int, breaker: CircuitBreaker.State,
                lastSuccess: Timestamp?, lastError: String?, lastErrorAt: Timestamp?) {
        self.name = name
        self.kind = kind
        self.queueDepth = queueDepth
        self.parked = parked
        self.inFlight = inFlight
        self.breaker = breaker
        self.lastSuccess = lastSuccess
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
    }
}

/// One destination's own queue: events wait here until due, at most `concurrency` attempts
/// are in flight, and its circuit breaker decides when a failing destination is tried again.
/// A slow, dead or hanging destination only ever delays its own events.
///
/// All state is confined to `queue`. Waiting events sit in a `WaitingRoom` with one timer
/// armed for the earliest, so a backlog for a dead destination costs no CPU while it waits,
/// and only a bounded number of them keep their event in memory.
final class DestinationQueue: @unchecked Sendable {
    /// What the queue tells the engine; called on the queue's own serial queue.
    struct Events: Sendable {
        var attempted: @Sendable (DeliveryJob, DeliveryAttempt) -> Void
        var delivered: @Sendable (DeliveryJob) -> Void
        var deadLettered: @Sendable (DeliveryJob, DeadLetter.Reason, String) -> Void
        /// Reads a parked job's event back from the journal; nil when it cannot.
        var readBack: @Sendable (ParkedJob, @escaping @Sendable (StoredNotification?) -> Void) -> Void
        /// A parked job whose event could not be read `maxFailedReadBacks` times.
        var unreadable: @Sendable (ParkedJob) -> Void
    }

    /// A parked event the journal could not give back is tried again `readBackRetryDelay`
    /// later, without spending an attempt (the failure is logged each time); after this many
    /// failures in a row it is dead-lettered `unreadable` rather than tried forever.
    static let maxFailedReadBacks = 12

    /// The pause before reading a parked event again (5 s; tests shorten it).
    let readBackRetryDelay: Duration

    let name: String
    let kind: String
    /// The definition this queue was built from; a reload keeps the queue when it is unchanged.
    let definition: DestinationConfiguration
    private let driver: any DeliveryDriver
    private let limits: DeliveryLimits
    private let clock: any TimeSource
    private let events: Events
    private let queue: DispatchQueue

    // Confined to `queue`.
    private var waiting: WaitingRoom
    private var inFlight = 0
    private var breaker: CircuitBreaker
    private var timer: (any DispatchSourceTimer)?
    private var stopped = false
    /// Set by `stop`: nothing new starts, attempts in flight may finish until the grace ends,
    /// then this runs (once) and the queue is stopped.
    private var stopCompletion: (@Sendable () -> Void)?
    private var lastSuccess: Timestamp?
    private var lastError: (message: String, at: Timestamp)?
    /// Set when a reload removed or redefined this destination: nothing new starts, and every
    /// job that would wait here goes to the hand-off instead.
    private var handOff: (@Sendable (WaitingJob) -> Void)?
    private var retiredCompletion: (@Sendable () -> Void)?

    init(definition: DestinationConfiguration, kind: String, driver: any DeliveryDriver, limits: DeliveryLimits,
         wholeJobLimit: Int, clock: any TimeSource, events: Events, readBackRetryDelay: Duration = .seconds(5)) {
        self.readBackRetryDelay = readBackRetryDelay
        self.definition = definition
        self.name = definition.name
        self.kind = kind
        self.driver = driver
        self.limits = limits
        waiting = WaitingRoom(wholeLimit: wholeJobLimit)
        self.clock = clock
        self.events = events
        queue = DispatchQueue(label: "storerelay.destination.\(definition.name)", target: .deliveryWork)
        breaker = CircuitBreaker(threshold: 5, cooldown: limits.schedule)
    }

    func body(for notification: StoredNotification) -> [UInt8] { driver.body(for: notification) }

    /// Adds `job`; it goes out when due and the destination has room.
    func enqueue(_ job: DeliveryJob) { receive(.whole(job)) }

    /// Adds a job handed over from the queue a reload replaced (a whole one gets the body
    /// this definition sends).
    func takeOver(_ job: WaitingJob) {
        guard case .whole(var whole) = job else { return receive(job) }
        whole.body = body(for: whole.notification)
        receive(.whole(whole))
    }

    private func receive(_ job: WaitingJob) {
        queue.async { [self] in
            guard !stopped, !isDraining else { return }
            if let handOff { return handOff(job) }
            switch job {
            case .whole(let whole): waiting.add(whole, now: clock.now())
            case .parked(let parked): waiting.add(parked)
            }
            pump()
        }
    }

    /// Retires the queue after a reload: waiting jobs, and every in-flight job that still needs
    /// another attempt, go to `handOff`; `completion` runs once nothing is in flight and the
    /// driver is closed.
    func retire(handOff: @escaping @Sendable (WaitingJob) -> Void, completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            self.handOff = handOff
            retiredCompletion = completion
            timer?.cancel()
            timer = nil
            for job in waiting.drain() { handOff(job) }
            closeIfRetiredAndIdle()
        }
    }

    private func closeIfRetiredAndIdle() {
        guard inFlight == 0, waiting.reading == 0, let completion = retiredCompletion else { return }
        retiredCompletion = nil
        driver.close(completion: completion)
    }

    /// Starts no further attempt; those in flight may finish (and their outcome is recorded)
    /// for up to `grace`, then the driver closes and `completion` runs. Waiting events, and
    /// attempts still in flight at the end, resume from the journal on the next start.
    func stop(grace: Duration = .zero, completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            guard !stopped, stopCompletion == nil else { return completion() }
            stopCompletion = completion
            timer?.cancel()
            timer = nil
            _ = waiting.drain()
            if inFlight == 0 { return finishStopping() }
            queue.asyncAfter(deadline: .now() + .milliseconds(Int(min(grace.wholeMilliseconds, Int64(Int32.max))))) { [self] in
                finishStopping()
            }
        }
    }

    private func finishStopping() {
        guard !stopped, let completion = stopCompletion else { return }
        stopped = true
        stopCompletion = nil
        driver.close(completion: completion)
    }

    /// Stopping, in its grace period: outcomes are still recorded, nothing new starts.
    private var isDraining: Bool { stopCompletion != nil }

    var status: DestinationStatus {
        queue.sync {
            DestinationStatus(name: name, kind: kind, queueDepth: waiting.count, parked: waiting.parkedCount, inFlight: inFlight,
                              breaker: breaker.state, lastSuccess: lastSuccess,
                              lastError: lastError?.message, lastErrorAt: lastError?.at)
        }
    }

    // MARK: Scheduling

    /// Starts every due event the concurrency limit and the breaker allow, reads back parked
    /// events coming due, then arms the timer for the next moment something needs doing.
    private func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped, !isDraining, handOff == nil else { return closeIfRetiredAndIdle() }
        let now = clock.now()
        while inFlight < driver.concurrency, let job = waiting.popDue(now: now) {
            let expired = now >= expiry(budgetStart: job.budgetStart)
            if !expired && !breaker.allowsAttempt(at: now) {
                waiting.putBack(job)
                break
            }
            begin(job, expired: expired, now: now)
        }
        for parked in waiting.takeJobsToRead(now: now) { readBack(parked) }
        armTimer(now: now)
    }

    /// Attempts `job`, or dead-letters it when its `max-age` has passed.
    private func begin(_ job: DeliveryJob, expired: Bool, now: Timestamp) {
        guard expired else { return start(job) }
        var job = job
        job.due = now
        events.deadLettered(job, .exhausted, "max-age \(ConfigFormat.duration(limits.maxAge)) passed before the event could be delivered")
    }

    private func readBack(_ parked: ParkedJob) {
        events.readBack(parked) { [self] event in
            queue.async { self.readBackFinished(parked, event) }
        }
    }

    private func readBackFinished(_ parked: ParkedJob, _ event: StoredNotification?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        waiting.readFinished()
        if let event {
            let job = parked.restored(event, body: driver.body(for: event))
            if let handOff { handOff(.whole(job)) } else { waiting.putBack(job) }
        } else {
            var later = parked
            later.failedReads += 1
            later.due = clock.now().advanced(by: readBackRetryDelay)
            if later.failedReads >= Self.maxFailedReadBacks {
                events.unreadable(later)
            } else if let handOff {
                handOff(.parked(later))
            } else {
                waiting.add(later)
            }
        }
        pump()
    }

    private func armTimer(now: Timestamp) {
        timer?.cancel()
        timer = nil
        var canStart = inFlight < driver.concurrency
        var notBefore: Timestamp?
        switch breaker.state {
        case .closed: break
        case .open: notBefore = breaker.openUntil
        case .halfOpen: canStart = false  // the probe's outcome pumps again
        }
        guard var wake = waiting.nextWake(canStart: canStart) else { return }
        if let notBefore { wake = max(wake, notBefore) }
        let delay = max(0, wake.milliseconds - now.milliseconds)
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .milliseconds(Int(min(delay, Int64(Int32.max)))), leeway: .milliseconds(5))
        source.setEventHandler { [weak self] in self?.pump() }
        source.resume()
        timer = source
    }

    private func start(_ job: DeliveryJob) {
        inFlight += 1
        driver.attempt(job, number: job.attempts.count + 1) { [self] outcome in
            queue.async { self.finish(job, outcome) }
        }
    }

    private func finish(_ job: DeliveryJob, _ outcome: AttemptOutcome) {
        dispatchPrecondition(condition: .onQueue(queue))
        inFlight -= 1
        guard !stopped else { return }
        defer { if isDraining && inFlight == 0 { finishStopping() } }
        var job = job
        job.attempts.append(outcome.attempt)
        let now = clock.now()
        switch outcome {
        case .delivered:
            breaker.recordSuccess()
            lastSuccess = now
            events.delivered(job)
        case .reject(let attempt):
            breaker.recordAnswer()
            lastError = (attempt.error ?? "rejected", now)
            events.deadLettered(job, .rejected, "the destination answered HTTP \(attempt.status ?? 0), which is not retried")
        case .retry(let attempt, let retryAfter):
            breaker.recordFailure(at: now)
            lastError = (attempt.error ?? "failed", now)
            scheduleRetry(job, after: retryAfter, now: now)
        }
        pump()
    }

    private func scheduleRetry(_ job: DeliveryJob, after retryAfter: Duration?, now: Timestamp) {
        var job = job
        guard job.attemptsInBudget < limits.maxAttempts else {
            events.deadLettered(job, .exhausted, "gave up after \(job.attemptsInBudget) attempts (max-attempts \(limits.maxAttempts))")
            return
        }
        let backoff = limits.schedule.delay(afterFailures: job.attemptsInBudget)
        let delay = max(backoff, retryAfter ?? .zero)
        job.due = now.advanced(by: delay)
        if job.due >= expiry(budgetStart: job.budgetStart) {
            events.deadLettered(job, .exhausted, "max-age \(ConfigFormat.duration(limits.maxAge)) would pass before the next attempt")
            return
        }
        events.attempted(job, job.attempts.last!)
        if let handOff { return handOff(.whole(job)) }
        waiting.add(job, now: now)
    }

    private func expiry(budgetStart: Timestamp) -> Timestamp {
        budgetStart.advanced(by: limits.maxAge)
    }
}
