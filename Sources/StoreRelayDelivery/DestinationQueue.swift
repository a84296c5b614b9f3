import Dispatch
import StoreRelayConfig
import StoreRelayStorage
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
        /// Every attempt as it ends, with its `storerelay_deliveries_total` outcome.
        var attemptEnded: @Sendable (String, String, DeliveryAttempt) -> Void
        var delivered: @Sendable (DeliveryJob) -> Void
        var deadLettered: @Sendable (DeliveryJob, DeadLetter.Reason, String) -> Void
        /// Reads a parked job's event back from the journal; nil when it cannot.
        var readBack: @Sendable (ParkedJob, @escaping @Sendable (StoredNotification?) -> Void) -> Void
        /// A parked job whose event could not be read `maxFailedReadBacks` times.
        var unreadable: @Sendable (ParkedJob) -> Void
        /// Jobs taken into the window (destination, jobs, the cursor after them).
        var took: @Sendable (String, [DeliveryJob], RecordPosition) -> Void
        /// An event offered while the destination is behind: it waits in the journal.
        var passed: @Sendable (String) -> Void
        /// The destination read its backlog to the journal's end and takes new events directly.
        var caughtUp: @Sendable (String) -> Void
        /// The backlog could not be read at a cursor, again and again: reading goes on from the
        /// second position (what lay between is lost, and said so).
        var skipped: @Sendable (String, RecordPosition, RecordPosition) -> Void
        /// Reads up to `room` of the destination's next events from the journal, from a cursor.
        var readBacklog: @Sendable (String, RecordPosition, Int, @escaping @Sendable (BacklogRead) -> Void) -> Void
    }

    /// Where new events come from: handed over as they are accepted (`live`), or read from
    /// the journal at `cursor` while the destination has a backlog there (`behind`).
    enum Feed { case live, behind }

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
    /// Taken, unfinished events at most (whole, parked, in flight).
    private let window: Int
    /// Nil until `start`: nothing is read or taken before the engine resumed.
    private var cursor: RecordPosition?
    private var feed = Feed.behind
    private var readingBacklog = false
    /// The last event offered while `behind`: the backlog reaches at least that far.
    private var offeredWhileBehind: RecordPosition?
    /// When the last event read from the backlog was accepted: the ones after it were
    /// accepted later.
    private var backlogAcceptedUpTo = Timestamp(milliseconds: 0)
    private var failedBacklogReads = 0
    /// After a failed read of the backlog, the next waits until then.
    private var backlogPausedUntil: Timestamp?
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
         wholeJobLimit: Int, window: Int, clock: any TimeSource, events: Events, readBackRetryDelay: Duration = .seconds(5)) {
        self.window = window
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

    /// Adds `job` (a replay); it goes out when due and the destination has room.
    func enqueue(_ job: DeliveryJob) { receive(.whole(job)) }

    /// Starts reading the journal at `cursor`, with `unfinished` (taken before) in the window.
    func start(cursor: RecordPosition, unfinished: [ParkedJob]) {
        queue.async { [self] in
            self.cursor = cursor
            for job in unfinished { waiting.add(job) }
            pump()
        }
    }

    /// An event the journal just stored at `position` (its record ends at `end`): taken at once
    /// when the destination is caught up and has room, otherwise left in the journal, where
    /// the destination reads it when its turn comes.
    func offer(_ notification: StoredNotification, at position: RecordPosition, end: RecordPosition) {
        queue.async { [self] in
            guard let cursor, !stopped, !isDraining, handOff == nil else { return }
            if feed == .live && position >= cursor && roomToTake > 0 && waiting.wholeRoom > 0 {
                let job = DeliveryJob(notification: notification, destination: name, position: position,
                                      body: driver.body(for: notification), attempts: [], due: clock.now(),
                                      budgetStart: notification.receivedAt)
                self.cursor = end
                events.took(name, [job], end)
                waiting.add(job, now: clock.now())
                return pump()
            }
            if position >= cursor {
                feed = .behind
                offeredWhileBehind = max(offeredWhileBehind ?? position, position)
                events.passed(name)
                pump()
            }
        }
    }

    /// Taken events the window can still hold.
    private var roomToTake: Int { window - waiting.count - inFlight }
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
        guard inFlight == 0, waiting.reading == 0, !readingBacklog, let completion = retiredCompletion else { return }
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
        // The backlog's events have been due since they were accepted: they go before parked
        // retries due later than that, as they would in one queue ordered by due time.
        let backlogFirst = waiting.parkedEarliest.map { $0 > backlogAcceptedUpTo } ?? true
        if backlogFirst { readBacklogIfRoom() }
        for parked in waiting.takeJobsToRead(now: now) { readBack(parked) }
        if !backlogFirst { readBacklogIfRoom() }
        armTimer(now: now)
    }

    /// Behind: reads the next events from the journal while the window has room for whole
    /// ones (fresh events are due at once; reading more would only park them again).
    private func readBacklogIfRoom() {
        guard feed == .behind, !readingBacklog, let cursor else { return }
        if let paused = backlogPausedUntil, clock.now() < paused { return }
        let room = min(roomToTake, waiting.wholeRoom)
        guard room > 0 else { return }
        readingBacklog = true
        waiting.reserve(room)
        events.readBacklog(name, cursor, room) { [self] read in
            queue.async { self.backlogRead(read, reserved: room) }
        }
    }

    private func backlogRead(_ read: BacklogRead, reserved: Int) {
        dispatchPrecondition(condition: .onQueue(queue))
        readingBacklog = false
        waiting.release(reserved)
        guard !stopped else { return }
        if read.failed, let cursor {
            // The journal could not be read: try again shortly, without losing the place;
            // after many failures in a row, go on at the next segment (logged as lost).
            failedBacklogReads += 1
            if failedBacklogReads >= Self.maxFailedReadBacks {
                failedBacklogReads = 0
                self.cursor = RecordPosition(segment: cursor.segment + 1, offset: 0)
                events.skipped(name, cursor, self.cursor!)
                return pump()
            }
            backlogPausedUntil = clock.now().advanced(by: readBackRetryDelay)
            queue.asyncAfter(deadline: .now() + .milliseconds(Int(readBackRetryDelay.wholeMilliseconds))) { [self] in pump() }
            return closeIfRetiredAndIdle()
        }
        failedBacklogReads = 0
        let now = clock.now()
        let jobs = read.jobs.map { job in
            var job = job
            job.body = driver.body(for: job.notification)
            return job
        }
        cursor = read.next
        if let last = jobs.last { backlogAcceptedUpTo = last.notification.receivedAt }
        events.took(name, jobs, read.next)
        if let handOff {
            for job in jobs { handOff(.whole(job)) }
            return closeIfRetiredAndIdle()
        }
        for job in jobs { waiting.add(job, now: now) }
        if read.atEnd && (offeredWhileBehind.map { $0 < read.next } ?? true) {
            feed = .live
            offeredWhileBehind = nil
            events.caughtUp(name)
        }
        pump()
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
        case .delivered(let attempt):
            events.attemptEnded(name, outcome.metricLabel, attempt)
            breaker.recordSuccess()
            lastSuccess = now
            events.delivered(job)
        case .reject(let attempt):
            events.attemptEnded(name, outcome.metricLabel, attempt)
            breaker.recordAnswer()
            lastError = (attempt.error ?? "rejected", now)
            events.deadLettered(job, .rejected, "the destination answered HTTP \(attempt.status ?? 0), which is not retried")
        case .unsendable(let attempt):
            events.attemptEnded(name, outcome.metricLabel, attempt)
            lastError = (attempt.error ?? "unsendable", now)
            events.deadLettered(job, .rejected, attempt.error ?? "the event cannot be sent to this destination")
        case .retry(let attempt, let retryAfter):
            breaker.recordFailure(at: now)
            lastError = (attempt.error ?? "failed", now)
            scheduleRetry(job, attempt, after: retryAfter, now: now)
        }
        pump()
    }

    private func scheduleRetry(_ job: DeliveryJob, _ attempt: DeliveryAttempt, after retryAfter: Duration?, now: Timestamp) {
        var job = job
        guard job.attemptsInBudget < limits.maxAttempts else {
            events.attemptEnded(name, "exhausted", attempt)
            events.deadLettered(job, .exhausted, "gave up after \(job.attemptsInBudget) attempts (max-attempts \(limits.maxAttempts))")
            return
        }
        let backoff = limits.schedule.delay(afterFailures: job.attemptsInBudget)
        let delay = max(backoff, retryAfter ?? .zero)
        job.due = now.advanced(by: delay)
        if job.due >= expiry(budgetStart: job.budgetStart) {
            events.attemptEnded(name, "exhausted", attempt)
            events.deadLettered(job, .exhausted, "max-age \(ConfigFormat.duration(limits.maxAge)) would pass before the next attempt")
            return
        }
        events.attemptEnded(name, "retry", attempt)
        events.attempted(job, attempt)
        if let handOff { return handOff(.whole(job)) }
        waiting.add(job, now: now)
    }

    private func expiry(budgetStart: Timestamp) -> Timestamp {
        budgetStart.advanced(by: limits.maxAge)
    }
}
