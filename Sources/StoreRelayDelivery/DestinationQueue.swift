import Dispatch
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayCore

/// One destination's own queue: events wait here until due, at most `concurrency` attempts
/// are in flight, and its circuit breaker decides when a failing destination is tried again.
/// A slow, dead or hanging destination only ever delays its own events.
///
/// Its `Lifecycle` is the one answer to whether it may start, take or hand over a job: live
/// or behind (its feed) while it runs, then stopping, retiring or stopped. Attempts go through
/// an `AttemptRunner`, as in cluster mode.
///
/// All state is confined to `queue`. Waiting events sit in a `WaitingRoom` with one timer
/// armed for the earliest, so a backlog for a dead destination costs no CPU while it waits,
/// and only a bounded number of them keep their event in memory.
final class DestinationQueue: @unchecked Sendable {
    /// What the queue asks of the engine (progress records, dead letters, journal reads);
    /// called on the queue's own serial queue. Its place in the journal it writes itself, in
    /// `keeper`, before it calls any of these.
    struct Events: Sendable {
        var attempted: @Sendable (DeliveryJob, DeliveryAttempt) -> Void
        var delivered: @Sendable (DeliveryJob) -> Void
        var deadLettered: @Sendable (DeliveryJob, DeadLetter.Reason, String) -> Void
        /// Reads a parked job's event back from the journal; nil when it cannot.
        var readBack: @Sendable (ParkedJob, @escaping @Sendable (StoredNotification?) -> Void) -> Void
        /// A parked job whose event could not be read `maxFailedReadBacks` times.
        var unreadable: @Sendable (ParkedJob) -> Void
        /// Reads up to `room` of the destination's next events from the journal, from a cursor.
        var readBacklog: @Sendable (String, RecordPosition, Int, @escaping @Sendable (BacklogRead) -> Void) -> Void
    }

    /// Where the queue is in its life, and while it runs, where its new events come from.
    /// Every entry point asks this first; nothing else says whether the queue may start,
    /// take or hand over a job.
    enum Lifecycle {
        /// Caught up: each event is handed over as the journal stores it.
        case live
        /// A backlog waits in the journal: the queue reads it at `cursor` as its window frees.
        /// (Also the state before `start`, with no cursor yet: nothing is read or taken.)
        case behind
        /// `stop` was called: nothing new starts; attempts in flight may finish, and their
        /// outcome is recorded, until the grace ends; then the kind closes and `completion`
        /// runs, once.
        case stopping(completion: @Sendable () -> Void)
        /// A reload removed or redefined the destination: nothing new starts, and every job
        /// that would wait here goes to `handOff`. `completion` runs once nothing is in flight
        /// or being read and the kind is closed (nil once it ran).
        case retiring(handOff: @Sendable (WaitingJob) -> Void, completion: (@Sendable () -> Void)?)
        /// Closed: outcomes arriving now are not recorded (the journal resumes them).
        case stopped
    }

    /// A parked event the journal could not give back is tried again `readBackRetryDelay`
    /// later, without spending an attempt (the failure is logged each time); after this many
    /// failures in a row it is dead-lettered `unreadable` rather than tried forever.
    static let maxFailedReadBacks = 12

    /// The pause before reading a parked event again (5 s; tests shorten it).
    let readBackRetryDelay: Duration

    let name: String
    /// The definition this queue was built from; a reload keeps the queue when it is unchanged.
    let definition: DestinationConfiguration
    /// Sends, and judges every outcome; confined to `queue` like the rest.
    private let runner: AttemptRunner
    private let clock: any TimeSource
    private let logger: Logger
    private let events: Events
    private let queue: DispatchQueue
    /// This destination's place in the journal: written here as it changes, read by the
    /// engine's checkpoint.
    let keeper: BookKeeper

    /// `order per-subscription`: events wait in `keeper.order` while an earlier event of
    /// their subscription is on its way.
    private let ordered: Bool

    // Confined to `queue`.
    private var waiting: WaitingRoom
    /// The budget start of each job being attempted, by event id: an event in flight is still
    /// pending, and the oldest one often is (a failing destination retries it).
    private var attempting: [String: Timestamp] = [:]
    /// Taken, unfinished events at most (whole, parked, in flight).
    private let window: Int
    private var lifecycle = Lifecycle.behind
    /// Nil until `start`: nothing is read or taken before the engine resumed.
    private var cursor: RecordPosition?
    private var readingBacklog = false
    /// The last event offered while `behind`: the backlog reaches at least that far.
    private var offeredWhileBehind: RecordPosition?
    /// When the last event read from the backlog was accepted: the ones after it were
    /// accepted later.
    private var backlogAcceptedUpTo = Timestamp(milliseconds: 0)
    private var failedBacklogReads = 0
    /// After a failed read of the backlog, the next waits until then.
    private var backlogPausedUntil: Timestamp?
    private var timer: (any DispatchSourceTimer)?

    init(definition: DestinationConfiguration, setup: DestinationSetup, wholeJobLimit: Int, window: Int, clock: any TimeSource,
         observer: any DeliveryObserver, logger: Logger, keeper: BookKeeper, events: Events,
         readBackRetryDelay: Duration = .seconds(5)) {
        self.window = window
        self.readBackRetryDelay = readBackRetryDelay
        self.definition = definition
        self.name = definition.name
        ordered = definition.delivery?.order == .perSubscription
        waiting = WaitingRoom(wholeLimit: wholeJobLimit)
        self.clock = clock
        self.logger = logger
        self.keeper = keeper
        self.events = events
        queue = DispatchQueue(label: "storerelay.destination.\(definition.name)", target: .deliveryWork)
        runner = AttemptRunner(destination: definition.name, setup: setup, queue: queue, clock: clock, observer: observer,
                               logger: logger)
    }

    /// `webhook` or `file`.
    var kind: String { runner.kindName }

    func body(for notification: StoredNotification) -> [UInt8] { runner.prepare(notification) }

    /// What this destination receives holds Apple's body (see `DeliveryOptions.sendsAppleBody`).
    var needsAppleBody: Bool { definition.delivery?.sendsAppleBody ?? false }

    /// Adds `job` (a replay); it goes out when due and the destination has room.
    func enqueue(_ job: DeliveryJob) { receive(.whole(job)) }

    /// Starts reading the journal at `cursor`, with `unfinished` (taken before) in the window.
    func start(cursor: RecordPosition, unfinished: [ParkedJob]) {
        queue.async { [self] in
            self.cursor = cursor
            // Journal order is acceptance order: the earliest unfinished event of each
            // subscription holds it again, as before the restart.
            for job in unfinished.sorted(by: { $0.position < $1.position }) { admit(job) }
            if !ordered {
                // A reload dropped `order`: nothing waits for anything any more.
                for job in keeper.order.releaseAll() { waiting.add(job) }
            }
            pump()
        }
    }

    /// An event the journal just stored at `position` (its record ends at `end`): taken at once
    /// when the destination is caught up and has room, otherwise left in the journal, where
    /// the destination reads it when its turn comes.
    func offer(_ notification: StoredNotification, at position: RecordPosition, end: RecordPosition) {
        queue.async { [self] in
            guard let cursor, isRunning else { return }
            // Paused, the event stays in the journal: the backlog costs no memory.
            if case .live = lifecycle, !runner.isPaused, position >= cursor && roomToTake > 0 && waiting.wholeRoom > 0 {
                let job = DeliveryJob(notification: notification, destination: name, position: position,
                                      body: runner.prepare(notification), attempts: [], due: clock.now(),
                                      budgetStart: notification.receivedAt)
                self.cursor = end
                keeper.took([job], cursor: end)
                admit(job, now: clock.now())
                return pump()
            }
            if position >= cursor {
                lifecycle = .behind
                offeredWhileBehind = max(offeredWhileBehind ?? position, position)
                keeper.passed()
                pump()
            }
        }
    }

    /// Pauses or resumes the destination (SPEC "Delivery controls"). Paused, no attempt starts
    /// and nothing is read from the journal (neither backlog nor parked events) and no timer
    /// is armed: a backlog costs nothing while it waits. Attempts in flight finish and are
    /// recorded; a retry they ask for waits for the resume.
    func setPaused(_ paused: Bool) {
        queue.async { [self] in
            guard runner.setPaused(paused) else { return }
            pump()
        }
    }

    /// Taken events the window can still hold (those held behind their subscription count).
    private var roomToTake: Int { window - waiting.count - runner.inFlight - (ordered ? keeper.order.heldCount : 0) }

    /// Into the waiting room, unless an earlier event of its subscription is on its way
    /// (`order per-subscription`): then `keeper.order` holds it until that one finishes.
    private func admit(_ job: DeliveryJob, now: Timestamp) {
        if ordered, let parked = ParkedJob(job), !keeper.order.admit(parked) { return }
        waiting.add(job, now: now)
    }

    private func admit(_ job: ParkedJob) {
        if ordered, !keeper.order.admit(job) { return }
        waiting.add(job)
    }

    /// The delivery at `position` is finished: the next event of its subscription, if one
    /// was held, goes on its way (to the queue that replaces this one, while retiring).
    /// Asked whatever `ordered` says: a reload may have just dropped or added `order`.
    private func releaseNext(subscription: String?, at position: RecordPosition?, gap: String?) {
        guard let next = keeper.order.release(subscription: subscription, at: position, gap: gap, now: clock.now()) else { return }
        if case .retiring(let handOff, _) = lifecycle { return handOff(.parked(next)) }
        waiting.add(next)
    }
    /// Adds a job handed over from the queue a reload replaced (a whole one gets the body
    /// this definition sends).
    func takeOver(_ job: WaitingJob) {
        guard case .whole(var whole) = job else { return receive(job) }
        whole.body = body(for: whole.notification)
        receive(.whole(whole))
    }

    private func receive(_ job: WaitingJob) {
        queue.async { [self] in
            switch lifecycle {
            case .live, .behind: break
            case .retiring(let handOff, _): return handOff(job)
            case .stopping, .stopped: return
            }
            switch job {
            case .whole(let whole): admit(whole, now: clock.now())
            case .parked(let parked): admit(parked)
            }
            pump()
        }
    }

    /// Retires the queue after a reload: waiting jobs, and every in-flight job that still needs
    /// another attempt, go to `handOff`; `completion` runs once nothing is in flight and the
    /// destination's kind is closed.
    /// Already stopping or stopped, nothing is handed over: what it held resumes from the
    /// journal, and `completion` runs at once.
    func retire(handOff: @escaping @Sendable (WaitingJob) -> Void, completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            guard isRunning else { return completion() }
            lifecycle = .retiring(handOff: handOff, completion: completion)
            timer?.cancel()
            timer = nil
            for job in waiting.drain() { handOff(job) }
            closeIfRetiredAndIdle()
        }
    }

    private func closeIfRetiredAndIdle() {
        guard case .retiring(let handOff, let completion?) = lifecycle, runner.inFlight == 0, waiting.reading == 0,
              !readingBacklog else { return }
        lifecycle = .retiring(handOff: handOff, completion: nil)
        runner.close(completion: completion)
    }

    /// Starts no further attempt; those in flight may finish (and their outcome is recorded)
    /// for up to `grace`, then the destination's kind closes and `completion` runs. Waiting events, and
    /// attempts still in flight at the end, resume from the journal on the next start.
    func stop(grace: Duration = .zero, completion: @escaping @Sendable () -> Void) {
        queue.async { [self] in
            switch lifecycle {
            case .live, .behind:
                lifecycle = .stopping(completion: completion)
            case .retiring(_, let retired?):
                // Stopped while a reload retires it: the reload is told too, once closed.
                lifecycle = .stopping(completion: { retired(); completion() })
            case .retiring(_, nil), .stopping, .stopped:
                return completion()
            }
            timer?.cancel()
            timer = nil
            _ = waiting.drain()
            if runner.inFlight == 0 { return finishStopping() }
            queue.asyncAfter(deadline: .now() + .milliseconds(Int(min(grace.wholeMilliseconds, Int64(Int32.max))))) { [self] in
                finishStopping()
            }
        }
    }

    private func finishStopping() {
        guard case .stopping(let completion) = lifecycle else { return }
        lifecycle = .stopped
        runner.close(completion: completion)
    }

    /// Live or behind: new jobs may start.
    private var isRunning: Bool {
        switch lifecycle {
        case .live, .behind: true
        case .stopping, .retiring, .stopped: false
        }
    }

    private var isStopped: Bool {
        if case .stopped = lifecycle { true } else { false }
    }

    var status: DestinationStatus {
        queue.sync {
            let held = ordered ? keeper.order.heldCount : 0
            var status = runner.status(queueDepth: waiting.count + held, parked: waiting.parkedCount + held)
            // Held events wait behind an older one of their subscription, so they are never the oldest.
            status.oldestPendingSince = ([waiting.oldestBudgetStart] + attempting.values.map { $0 }).compactMap { $0 }.min()
            return status
        }
    }

    // MARK: Scheduling

    /// Starts every due event the concurrency limit and the breaker allow, reads back parked
    /// events coming due, then arms the timer for the next moment something needs doing.
    private func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard isRunning else { return closeIfRetiredAndIdle() }
        guard !runner.isPaused else {
            timer?.cancel()
            timer = nil
            return
        }
        let now = clock.now()
        while runner.room > 0, let job = waiting.popDue(now: now) {
            if let expired = runner.expired(job, now: now) {
                handle(expired)
                continue
            }
            guard runner.allowsAttempt(at: now) else {
                waiting.putBack(job)
                break
            }
            start(job)
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
        guard case .behind = lifecycle, !readingBacklog, let cursor else { return }
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
        guard !isStopped else { return }
        if read.failed, let cursor {
            // The journal could not be read: try again shortly, without losing the place;
            // after many failures in a row, go on at the next segment (logged as lost).
            failedBacklogReads += 1
            if failedBacklogReads >= Self.maxFailedReadBacks {
                failedBacklogReads = 0
                let next = RecordPosition(segment: cursor.segment + 1, offset: 0)
                self.cursor = next
                keeper.took([], cursor: next)
                logger.error("destination backlog unreadable; skipped to the next segment, the events between are lost", [
                    ("destination", name), ("from", cursor.description), ("to", next.description),
                ])
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
            job.body = runner.prepare(job.notification)
            return job
        }
        cursor = read.next
        if let last = jobs.last { backlogAcceptedUpTo = last.notification.receivedAt }
        keeper.took(jobs, cursor: read.next)
        if case .retiring(let handOff, _) = lifecycle {
            for job in jobs { handOff(.whole(job)) }
            return closeIfRetiredAndIdle()
        }
        for job in jobs { admit(job, now: now) }
        if read.atEnd && (offeredWhileBehind.map { $0 < read.next } ?? true) {
            if case .behind = lifecycle { lifecycle = .live }
            offeredWhileBehind = nil
            keeper.caughtUp()
        }
        pump()
    }

    private func readBack(_ parked: ParkedJob) {
        events.readBack(parked) { [self] event in
            queue.async { self.readBackFinished(parked, event) }
        }
    }

    private func readBackFinished(_ parked: ParkedJob, _ event: StoredNotification?) {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !isStopped else { return }
        waiting.readFinished()
        if let event {
            let job = parked.restored(event, body: runner.prepare(event))
            if case .retiring(let handOff, _) = lifecycle { handOff(.whole(job)) } else { waiting.putBack(job) }
        } else {
            var later = parked
            later.failedReads += 1
            later.due = clock.now().advanced(by: readBackRetryDelay)
            if later.failedReads >= Self.maxFailedReadBacks {
                events.unreadable(later)
                releaseNext(subscription: later.subscription, at: later.position, gap: later.eventId)
            } else if case .retiring(let handOff, _) = lifecycle {
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
        var canStart = runner.room > 0
        var notBefore: Timestamp?
        switch runner.breaker {
        case .closed: break
        case .open: notBefore = runner.openUntil
        case .halfOpen: canStart = false  // the probe's outcome pumps again
        }
        // Out of `rate` tokens: what is due waits for the next one.
        if canStart, let token = runner.nextToken(at: now) { notBefore = max(notBefore ?? token, token) }
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
        attempting[job.eventId] = job.budgetStart
        runner.take()
        runner.attempt(job) { [self] outcome in finish(job, outcome) }
    }

    private func finish(_ job: DeliveryJob, _ outcome: AttemptOutcome) {
        dispatchPrecondition(condition: .onQueue(queue))
        runner.release()
        attempting[job.eventId] = nil
        guard !isStopped else { return }
        defer { if case .stopping = lifecycle, runner.inFlight == 0 { finishStopping() } }
        handle(runner.settle(job, outcome))
        pump()
    }

    /// Writes the verdict down through the engine; a retry waits here again (or goes to the
    /// queue that replaces this one).
    private func handle(_ verdict: AttemptVerdict) {
        switch verdict {
        case .delivered(let job):
            // The book first: a checkpoint taken from now on says it is done (it is, even if
            // the progress record the engine appends is never stored).
            keeper.finished(at: job.position)
            events.delivered(job)
            releaseNext(subscription: job.subscription, at: job.position, gap: nil)
        case .deadLetter(let job, let reason, let detail):
            events.deadLettered(job, reason, detail)
            releaseNext(subscription: job.subscription, at: job.position, gap: job.eventId)
        case .retry(let job, let attempt):
            keeper.attempted(job)
            events.attempted(job, attempt)
            if case .retiring(let handOff, _) = lifecycle { return handOff(.whole(job)) }
            waiting.add(job, now: clock.now())
        }
    }
}
