import Dispatch
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// One destination's deliveries from this instance in cluster mode (docs/SPEC.md "Cluster
/// mode", Delivery): it reads entries from the destination's shared stream as one consumer
/// of the group, at most `concurrency` attempts in flight, and settles each attempt on the
/// server: delivered, retried later through the delayed set, or dead-lettered.
///
/// Between reads it moves due retries back into the stream, keeps the claim on attempts
/// still running, takes over entries another instance left idle for `claim-after`, and
/// refreshes the queue's figures. Attempts go through an `AttemptRunner`, as in single-node
/// mode: the same breaker (this instance's own), budget and verdicts; an entry holds one of
/// its slots from the read until the server has its outcome. All state is confined to `work`.
final class ClusterDestination: @unchecked Sendable {
    struct Settings: Sendable {
        var claimAfter: Duration
        var recentEvents: Int
        /// How often an idle destination looks for new entries. Acceptance on this instance
        /// nudges it at once; entries accepted elsewhere wait at most this long.
        var pollInterval: Duration = .milliseconds(100)
        /// How often due retries are moved, claims kept and idle entries claimed.
        var maintenanceInterval: Duration = .seconds(1)
    }

    /// Where the consumer is in its life; every entry point asks this first.
    enum Lifecycle {
        /// The consumer group is being joined (again, after the server lost it): nothing is read.
        case preparing
        /// Reading and attempting as the runner allows.
        case running
        /// `stop` was called: nothing new is read or started; attempts in flight may finish
        /// and settle until the grace ends, then the kind closes and `completion` runs, once.
        case stopping(completion: @Sendable () -> Void)
        /// Closed; what is still pending stays on the server for a claim.
        case stopped
    }

    let name: String
    let definition: DestinationConfiguration
    /// `order per-subscription`: entries are read in their subscription's turn
    /// (`ClusterQueue.readInTurn`), which the server keeps for every instance.
    private let ordered: Bool
    private let queue: ClusterQueue
    private let seal: ClusterSeal
    /// Told each finished delivery's state, once the server has it.
    private let eventLog: ClusterEventLog?
    private let settings: Settings
    private let clock: any TimeSource
    private let logger: Logger
    private let observer: any DeliveryObserver
    private let work: DispatchQueue
    /// Reads whether an operator paused this destination (`ClusterKeys.paused`).
    private let client: RedisClient
    /// Sends, and judges every outcome; confined to `work` like the rest.
    private let runner: AttemptRunner
    private let maintenance = RepeatingTimer()

    // Confined to `work`.
    /// Entries read and not yet settled on the server, by stream id.
    private var inFlight: [String: ClusterQueue.Entry] = [:]
    private var reading = false
    private var lifecycle = Lifecycle.preparing
    private var pollTimer: (any DispatchSourceTimer)?
    private var figures = ClusterQueue.Figures()
    private var lastConsumerCleanup: ContinuousClock.Instant?

    init(definition: DestinationConfiguration, setup: DestinationSetup, client: RedisClient, consumer: String, settings: Settings,
         seal: ClusterSeal = .off, clock: any TimeSource, logger: Logger, observer: any DeliveryObserver,
         eventLog: ClusterEventLog? = nil) {
        self.eventLog = eventLog
        self.seal = seal
        self.definition = definition
        ordered = definition.delivery?.order == .perSubscription
        name = definition.name
        queue = ClusterQueue(client: client, destination: definition.name, consumer: consumer)
        self.client = client
        self.settings = settings
        self.clock = clock
        self.logger = logger
        self.observer = observer
        work = DispatchQueue(label: "storerelay.cluster.\(definition.name)", target: .deliveryWork)
        runner = AttemptRunner(destination: definition.name, setup: setup, queue: work, clock: clock, observer: observer,
                               logger: logger)
    }

    /// Joins the destination's consumer group and starts reading.
    func start() {
        work.async { [self] in
            maintenance.start(every: settings.maintenanceInterval, leeway: .milliseconds(50), on: work) { [weak self] in self?.maintain() }
        }
    }

    /// Something was just enqueued here by this instance: read now rather than at the next poll.
    func nudge() {
        work.async { [self] in pump() }
    }

    /// `max-age`: how long a delivery (or a replay's, from the replay) may last.
    var maxAge: Duration { runner.limits.maxAge }

    var status: DestinationStatus {
        work.sync { runner.status(queueDepth: figures.length + figures.delayed, parked: 0) }
    }

    /// The queue's figures on the server, as last refreshed (every maintenance tick).
    var serverFigures: ClusterQueue.Figures { work.sync { figures } }

    /// Starts nothing new; attempts in flight may finish and settle for up to `grace`. What is
    /// still pending then stays pending on the server: another instance claims it after
    /// `claim-after`, or this one when it comes back with the same instance id.
    func stop(grace: Duration, completion: @escaping @Sendable () -> Void) {
        work.async { [self] in
            switch lifecycle {
            case .preparing, .running: lifecycle = .stopping(completion: completion)
            case .stopping, .stopped: return completion()
            }
            pollTimer?.cancel()
            pollTimer = nil
            maintenance.stop()
            if inFlight.isEmpty { return finishStopping() }
            work.asyncAfter(deadline: .now() + grace.dispatchInterval) { [self] in finishStopping(force: true) }
        }
    }

    /// Stopping or stopped: nothing new is read, claimed or started.
    private var isStopping: Bool {
        switch lifecycle {
        case .preparing, .running: false
        case .stopping, .stopped: true
        }
    }

    /// Closes once stopping and nothing is left in flight (or the grace ended: `force`).
    private func finishStopping(force: Bool = false) {
        guard case .stopping(let completion) = lifecycle, force || inFlight.isEmpty else { return }
        lifecycle = .stopped
        runner.close(completion: completion)
    }

    // MARK: Reading

    /// Pauses or resumes at once on this instance (the pause is stored on the server by
    /// whoever asked; the other instances read it at their next tick). Paused, nothing is
    /// read or claimed and no attempt starts; entries already read finish.
    func setPaused(_ paused: Bool) {
        work.async { [self] in applyPaused(paused) }
    }

    private func applyPaused(_ paused: Bool) {
        dispatchPrecondition(condition: .onQueue(work))
        guard runner.setPaused(paused), !paused else { return }
        pump()
    }

    /// Each tick first reads whether this destination is paused (by an operator, through any
    /// instance), then maintains it. A consumer being prepared waits for an answer: a
    /// destination paused before a restart reads nothing after it.
    private func maintain() {
        dispatchPrecondition(condition: .onQueue(work))
        guard !isStopping else { return }
        client.send(RESPCommand("SISMEMBER", ClusterKeys().paused, name)) { [self] result in
            work.async { [self] in
                guard !isStopping else { return }
                let paused = (try? result.get())?.integer.map { $0 == 1 }
                if let paused { applyPaused(paused) }
                if paused == nil, case .preparing = lifecycle { return }
                maintainAfterPauseCheck()
            }
        }
    }

    private func maintainAfterPauseCheck() {
        guard case .running = lifecycle else {
            queue.prepare { [self] result in
                work.async { [self] in
                    switch result {
                    case .success:
                        if case .preparing = lifecycle { lifecycle = .running }
                        pump()
                    case .failure(let error):
                        logger.warning("cluster queue not ready", [("destination", name), ("error", error.message)])
                    }
                }
            }
            return
        }
        let now = clock.now().milliseconds
        queue.moveDue(now: now) { [self] result in
            if case .success(let moved) = result, moved > 0 { nudge() }
        }
        queue.keepAlive(Array(inFlight.values)) { _ in }
        // Paused, entries another instance left stay where they are until the resume.
        if !runner.isPaused {
            queue.claimIdle(minimumIdle: settings.claimAfter, count: 100) { [self] result in
                work.async { [self] in claimed(result) }
            }
        }
        removeDeadConsumersWhenDue()
        queue.figures(now: now) { [self] result in
            guard case .success(let fresh) = result else { return }
            work.async { [self] in figures = fresh }
        }
        pump()
    }

    /// Once per `claim-after`: by then a dead instance's entries have been claimed, and its
    /// consumer, with nothing pending, can go.
    private func removeDeadConsumersWhenDue() {
        let now = ContinuousClock.now
        if let last = lastConsumerCleanup, now - last < settings.claimAfter { return }
        lastConsumerCleanup = now
        queue.removeDeadConsumers { [self] result in
            guard case .success(let removed) = result, !removed.isEmpty else { return }
            logger.info("cluster consumers of dead instances removed", [
                ("destination", name), ("consumers", String(removed.joined(separator: " ").prefix(300))),
            ])
        }
    }

    private func claimed(_ result: Result<ClusterQueue.Claimed, RedisError>) {
        guard case .success(let claimed) = result, !isStopping else { return }
        if !claimed.lost.isEmpty {
            observer.entriesLost(destination: name, count: claimed.lost.count)
            logger.error("cluster entries deleted while pending: acknowledged events no instance can deliver", [
                ("destination", name), ("entries", claimed.lost.joined(separator: " ")),
            ])
        }
        // Ours already (an attempt still running when its idle time ran out) or new to us.
        let taken = claimed.entries.filter { inFlight[$0.streamId] == nil }
        guard !taken.isEmpty else { return }
        observer.entriesClaimed(destination: name, count: taken.count)
        logger.warning("cluster entries claimed from an idle instance", [("destination", name), ("entries", taken.count)])
        hold(taken)
        load(taken)
    }

    /// Reads as many new entries as the concurrency limit and the breaker allow.
    private func pump() {
        dispatchPrecondition(condition: .onQueue(work))
        guard case .running = lifecycle, !reading, !runner.isPaused else { return }
        let free = runner.room
        guard free > 0 else { return }
        let now = clock.now()
        guard runner.allowsAttempt(at: now) else {
            // The later of the breaker's probe and the `rate`'s next token.
            return schedulePoll(at: [runner.openUntil, runner.nextToken(at: now)].compactMap { $0 }.max())
        }
        // Each entry read spends a token of the `rate` (`hold`), so no more are read than it allows.
        let count = runner.breaker == .closed ? min(free, 100, runner.rateRoom(at: now)) : 1
        reading = true
        let read = ordered ? queue.readInTurn : queue.read
        read(count) { [self] result in
            work.async { [self] in
                reading = false
                switch result {
                case .success(let entries) where !entries.isEmpty:
                    hold(entries)
                    load(entries)
                    pump()
                case .success:
                    if runner.breaker == .halfOpen { runner.cancelProbe() }
                    schedulePoll(at: nil)
                case .failure(let error):
                    if runner.breaker == .halfOpen { runner.cancelProbe() }
                    logger.warning("cluster queue read failed", [("destination", name), ("error", error.message)])
                    if error.message.contains("NOGROUP"), case .running = lifecycle { lifecycle = .preparing }
                    schedulePoll(at: clock.now().advanced(by: .seconds(1)))
                }
            }
        }
    }

    private func schedulePoll(at moment: Timestamp?) {
        guard !isStopping, pollTimer == nil else { return }
        let now = clock.now()
        let delay = moment.map { max(settings.pollInterval, .milliseconds($0.milliseconds - now.milliseconds)) } ?? settings.pollInterval
        let timer = DispatchSource.makeTimerSource(queue: work)
        timer.schedule(deadline: .now() + delay.dispatchInterval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in
            guard let self else { return }
            pollTimer?.cancel()
            pollTimer = nil
            pump()
        }
        timer.resume()
        pollTimer = timer
    }

    // MARK: Attempts

    private func load(_ entries: [ClusterQueue.Entry]) {
        queue.load(entries) { [self] result in
            work.async { [self] in
                switch result {
                case .success(let loaded):
                    for (entry, stored) in zip(entries, loaded) { begin(entry, record: stored.record, progress: stored.progress) }
                case .failure(let error):
                    // Left pending on the server: claimed again after claim-after.
                    logger.warning("cluster events not loaded", [("destination", name), ("error", error.message)])
                    for entry in entries { letGo(entry) }
                }
            }
        }
    }

    private func begin(_ entry: ClusterQueue.Entry, record: [UInt8]?, progress: [UInt8]?) {
        dispatchPrecondition(condition: .onQueue(work))
        guard !isStopping else {
            // Stopping: left pending on the server, for another instance (or this one, back).
            letGo(entry)
            return finishStopping()
        }
        let now = clock.now()
        guard !entry.eventId.isEmpty else { return tampered(entry, .event, "the stream entry names no event", now: now) }
        let read = (event: record, progress: progress)
        // The replay this delivery belongs to, when its progress says so: a tampered verdict
        // on the record still ends that replay.
        let replayOf = progress.flatMap { progress -> String? in
            guard case .intact(let bytes) = seal.open(progress, .progress, name, entry.eventId) else { return nil }
            return ClusterProgress(bytes)?.replayOf
        }
        guard let record else {
            let letter = DeadLetter(unreadableEventId: entry.eventId, destination: name, detail: "the event's record is missing on the cluster server",
                                    attempts: [], createdAt: now)
            return settle(entry, job: nil, letter: letter, phase: .deadLettered, now: now, replayOf: replayOf)
        }
        let opened = seal.open(record, .event, entry.eventId)
        guard case .intact(let bytes) = opened else {
            return tampered(entry, .event, "the event's record " + (opened.failure ?? ""), now: now, read: read, replayOf: replayOf)
        }
        guard let notification = StoredNotification(decoding: bytes) else {
            let letter = DeadLetter(unreadableEventId: entry.eventId, destination: name,
                                    detail: "the event's record on the cluster server is unreadable", attempts: [], createdAt: now)
            return settle(entry, job: nil, letter: letter, phase: .deadLettered, now: now, replayOf: replayOf)
        }
        // A genuine record queued where no instance routed it (copied onto another stream).
        // Checked with a key only: instances of versions before it wrote a replay's record
        // with the replayed destinations alone.
        guard !seal.isOn || (notification.disposition == .accept && notification.destinations.contains(name)) else {
            return tampered(entry, .event, "the event is not routed to this destination", now: now, read: read, replayOf: replayOf)
        }
        var saved = ClusterProgress(budgetStart: notification.receivedAt)
        if let progress {
            switch seal.open(progress, .progress, name, entry.eventId) {
            case .intact(let bytes):
                saved = ClusterProgress(bytes) ?? saved
            case let failed:
                return tampered(entry, .progress, "the delivery's progress " + (failed.failure ?? ""), now: now, read: read)
            }
        }
        var job = DeliveryJob(notification: notification, destination: name, body: runner.prepare(notification),
                              attempts: saved.attempts, due: now, attemptsBeforeBudget: saved.attemptsBefore,
                              budgetStart: saved.budgetStart, replayOf: saved.replayOf)
        job.orderingGap = entry.orderingGap
        job.redelivery = saved.redelivery
        if let expired = runner.expired(job, now: now) { return handle(entry, saved, expired, now: now) }
        runner.attempt(job) { [self, saved, job] outcome in
            handle(entry, saved, runner.settle(job, outcome), now: clock.now())
        }
    }

    /// Settles `entry` on the server as the runner's verdict says.
    private func handle(_ entry: ClusterQueue.Entry, _ saved: ClusterProgress, _ verdict: AttemptVerdict, now: Timestamp) {
        dispatchPrecondition(condition: .onQueue(work))
        switch verdict {
        case .delivered(let job):
            settle(entry, job: job, letter: nil, phase: .delivered, now: now)
        case .deadLetter(let job, let reason, let detail):
            deadLetter(entry, job, saved, reason, detail, now: now)
        case .retry(let job, _):
            retry(entry, job, saved)
        }
    }

    /// Puts the entry in the delayed set until `job.due`, with its progress so far.
    private func retry(_ entry: ClusterQueue.Entry, _ job: DeliveryJob, _ saved: ClusterProgress) {
        var progress = saved
        progress.attempts = job.attempts
        let state = EventDeliveryState.Delivery(destination: name, phase: .pending, attempts: job.attempts, nextAttempt: job.due,
                                                deadLetterId: nil)
        queue.retry(entry, due: job.due.milliseconds, progress: seal.seal(progress.encoded, .progress, name, job.eventId),
                    state: seal.seal(state.json.serializedBytes(), .state, job.eventId, name)) { [self] result in
            work.async { [self] in settled(entry, result) }
        }
    }

    private func deadLetter(_ entry: ClusterQueue.Entry, _ job: DeliveryJob, _ saved: ClusterProgress, _ reason: DeadLetter.Reason,
                            _ detail: String, now: Timestamp) {
        let letter = DeadLetter(notification: job.notification, destination: name, reason: reason, detail: detail,
                                attempts: job.attempts, createdAt: now)
        settle(entry, job: job, letter: letter, phase: .deadLettered, now: now)
    }

    /// Finishes the entry on the server: delivered, or dead-lettered with `letter`
    /// (`tampered`: a tampered one, standing in for these records as read).
    private func settle(_ entry: ClusterQueue.Entry, job: DeliveryJob?, letter: DeadLetter?, phase: EventDeliveryState.Phase,
                        now: Timestamp, tampered: (event: [UInt8]?, progress: [UInt8]?)? = nil, replayOf: String? = nil) {
        let state = EventDeliveryState.Delivery(destination: name, phase: phase, attempts: job?.attempts ?? letter?.attempts ?? [],
                                                nextAttempt: nil, deadLetterId: letter?.id)
        if let letter {
            observer.deadLettered(destination: name, reason: letter.reason)
            logger.warning("dead-lettered", [
                ("event.id", entry.eventId), ("original.transaction.id", job?.subscription ?? ""), ("destination", name),
                ("reason", letter.reason.rawValue), ("attempts", letter.attempts.count), ("detail", letter.detail ?? ""),
            ])
        }
        let outcome = ClusterQueue.Finish(
            state: seal.seal(state.json.serializedBytes(), .state, entry.eventId, name),
            letter: letter.map { ($0.id, seal.seal($0.json.serializedBytes(), .letter, $0.id), DeadLetterEntry($0).json.serializedBytes()) },
            replayed: job?.replayOf ?? replayOf,
            now: now.milliseconds, recentEvents: settings.recentEvents, tampered: tampered)
        queue.finish(entry, outcome) { [self] result in
            // Only the instance whose finish counted reports it (`false`: another one had).
            if case .success(true) = result, let logged = EventSummary.State(name: phase.rawValue) {
                eventLog?.setState(logged, eventId: entry.eventId, destination: name)
            }
            work.async { [self] in settled(entry, result.map { _ in true }) }
        }
    }

    /// A record of this entry failed its `cluster-key` check: nothing of it is delivered.
    /// The entry leaves the stream with a `tampered` dead letter in its place (holding only
    /// the ids), or, naming no event, with the error log line alone. The records as `read`
    /// are kept aside, not lost: one this instance cannot open may be genuine (sealed with a
    /// key it lacks, in a key rotation), and a replay of the letter once the keys are right
    /// takes it up again.
    private func tampered(_ entry: ClusterQueue.Entry, _ record: ClusterSeal.Kind, _ why: String, now: Timestamp,
                          read: (event: [UInt8]?, progress: [UInt8]?) = (nil, nil), replayOf: String? = nil) {
        observer.recordTampered(record: record.rawValue)
        logger.error("cluster record failed its integrity check; it is not delivered", [
            ("event.id", entry.eventId), ("destination", name), ("record", record.rawValue), ("stream.entry", entry.streamId),
            ("why", why),
        ])
        let letter = entry.eventId.isEmpty ? nil : DeadLetter(
            tamperedEventId: entry.eventId, destination: name,
            detail: "\(why) (cluster-key check): written or changed on the server by something other than an instance, "
                + "or sealed with a key this instance lacks; what was read is kept aside, and a replay delivers it once it checks out",
            createdAt: now)
        settle(entry, job: nil, letter: letter, phase: .deadLettered, now: now, tampered: read, replayOf: replayOf)
    }

    /// The server has the outcome (or could not take it: the entry stays pending, and is
    /// claimed and tried again after `claim-after`).
    private func settled(_ entry: ClusterQueue.Entry, _ result: Result<Bool, RedisError>) {
        dispatchPrecondition(condition: .onQueue(work))
        if case .failure(let error) = result {
            logger.warning("cluster delivery outcome not stored; the event will be tried again",
                           [("event.id", entry.eventId), ("destination", name), ("error", error.message)])
        }
        letGo(entry)
        guard !isStopping else { return finishStopping() }
        pump()
    }

    /// Entries read or claimed: each holds one of the runner's slots until it is let go.
    private func hold(_ entries: [ClusterQueue.Entry]) {
        for entry in entries where inFlight.updateValue(entry, forKey: entry.streamId) == nil { runner.take() }
    }

    private func letGo(_ entry: ClusterQueue.Entry) {
        if inFlight.removeValue(forKey: entry.streamId) != nil { runner.release() }
    }
}
