import Dispatch
import StoreRelayStorage
import StoreRelayCore

/// What the journal says about one destination of one event, replayed on start.
struct DestinationProgress: Sendable {
    var attempts: [DeliveryAttempt] = []
    var nextAttempt: Timestamp?
    var finished = false

    mutating func apply(_ record: DeliveryProgress) {
        switch record {
        case .attempted(_, let attempt, let next):
            attempts.append(attempt)
            nextAttempt = next
        case .delivered, .deadLettered:
            finished = true
        }
    }
}

extension DeliveryEngine {
    /// Replays the journal after a restart: every event whose deliveries are not all finished
    /// starts again, each destination with its attempts and next due time intact.
    ///
    /// Events are read back from the journal one at a time and most of a large backlog is
    /// parked again at once, so resuming after a long outage does not need the whole backlog
    /// in memory. Blocking (it reads the journal): call it at start-up, before serving.
    ///
    /// - Throws: when the journal cannot be read (after a few tries): starting without those
    ///   events would let their segments be retired undelivered.
    public func resume(from records: [RecoveredRecord]) throws(StorageError) {
        tracker.withLock { $0.resuming = true }
        defer { tracker.withLock { $0.resuming = false } }
        var progress: [String: [String: DestinationProgress]] = [:]
        for record in records where record.kind == .progress {
            guard let payload = record.progressPayload, let step = DeliveryProgress(decoding: payload) else { continue }
            progress[record.id, default: [:]][step.destination, default: DestinationProgress()].apply(step)
        }
        var events = 0
        for record in records where record.kind == .event {
            guard let notification = try reader.readForResume(record.position) else {
                logger.error("unreadable journal record skipped", [("event.id", record.id), ("position", "\(record.position)")])
                continue
            }
            events += 1
            start(notification, position: record.position, progress: progress[notification.id] ?? [:])
        }
        let unfinished = tracker.current.unfinishedCount
        logger.info("deliveries resumed", [("events", String(events)), ("unfinished", String(unfinished))])
        queue.async { self.retireFinishedSegments() }
    }

    /// Plans every delivery of `notification`, stored at `position`, that `progress` does not
    /// show finished.
    func start(_ notification: StoredNotification, position: RecordPosition, progress: [String: DestinationProgress]) {
        let segment = position.segment
        enum Plan { case deliver(DestinationQueue), deadLetter(DeadLetter.Reason, String?, String) }
        var plans: [(key: String, plan: Plan)] = []
        switch notification.disposition {
        case .quarantine(let reason):
            plans = [("", .deadLetter(.quarantined, nil, reason))]
        case .accept where notification.destinations.isEmpty:
            plans = [("", .deadLetter(.unrouted, nil, Self.noRouteDetail(notification)))]
        case .accept:
            for name in notification.destinations {
                if let queue = queue(named: name) {
                    plans.append((name, .deliver(queue)))
                } else {
                    plans.append((name, .deadLetter(.unrouted, name, "destination \(name) is no longer configured")))
                }
            }
        }
        plans.removeAll { progress[$0.key]?.finished == true }
        let newSegment = tracker.withLock { tracker -> Bool in
            let isNew = segment > tracker.highestSegmentSeen
            tracker.track(notification.id, segment: segment, keys: Set(plans.map(\.key)))
            return isNew
        }
        if newSegment { scheduleRetirement() }
        ledger.withLock { $0.record(notification, position: position, destinations: plans.map(\.key).filter { !$0.isEmpty }) }
        for (key, plan) in plans {
            switch plan {
            case .deliver(let queue):
                let restored = progress[key] ?? DestinationProgress()
                queue.enqueue(DeliveryJob(
                    notification: notification, destination: key, position: position, body: queue.body(for: notification),
                    attempts: restored.attempts, due: restored.nextAttempt ?? clock.now(),
                    budgetStart: notification.receivedAt))
            case .deadLetter(let reason, let destination, let detail):
                writeDeadLetter(notification, key: key, destination: destination, reason: reason, detail: detail,
                                attempts: [], replayOf: nil)
            }
        }
    }

    package static func noRouteDetail(_ notification: StoredNotification) -> String {
        let event = notification.event
        return "no route matches environment \(event.environment?.rawValue ?? "unknown"), app \(event.bundleId ?? "-"), type \(event.type)"
            + (event.subtype.map { "/" + $0 } ?? "")
    }

    // MARK: Progress from destination queues

    func recordAttempt(_ job: DeliveryJob, _ attempt: DeliveryAttempt) {
        observer.attemptFinished(destination: job.destination, outcome: "retry", seconds: Double(attempt.durationMs) / 1000)
        ledger.withLock { $0.update(job.notification, destination: job.destination) {
            $0.attempts = job.attempts
            $0.nextAttempt = job.due
        } }
        logger.info("delivery attempt failed", [
            ("event.id", job.eventId), ("destination", job.destination), ("attempt", String(job.attempts.count)),
            ("status", attempt.status.map(String.init) ?? ""), ("error", attempt.error ?? ""),
            ("next", job.due.iso8601),
        ])
        // Replays are not in the journal's bookkeeping: their dead letter stays until they succeed.
        guard job.replayOf == nil else { return }
        let record = DeliveryProgress.attempted(destination: job.destination, attempt: attempt, next: job.due)
        bookkeeping.enter()
        journal.appendProgress(id: job.eventId, payload: record.encoded()) { [logger, bookkeeping] outcome in
            if case .failed(let error) = outcome {
                logger.warning("delivery progress not stored", [("event.id", job.eventId), ("error", "\(error)")])
            }
            bookkeeping.leave()
        }
    }

    func recordDelivery(_ job: DeliveryJob) {
        if let attempt = job.attempts.last {
            observer.attemptFinished(destination: job.destination, outcome: "delivered", seconds: Double(attempt.durationMs) / 1000)
        }
        ledger.withLock { $0.update(job.notification, destination: job.destination) {
            $0.attempts = job.attempts
            $0.phase = .delivered
            $0.nextAttempt = nil
        } }
        logger.debug("delivered", [("event.id", job.eventId), ("destination", job.destination),
                                    ("attempt", String(job.attempts.count))])
        if let replayed = job.replayOf {
            return finishReplay(replayed, destination: job.destination, rewrittenAs: nil)
        }
        bookkeeping.enter()
        journal.appendProgress(id: job.eventId, payload: DeliveryProgress.delivered(destination: job.destination).encoded()) { _ in
            // Even if the mark is not stored, the delivery happened: at worst it repeats after a crash.
            self.finish(job.eventId, key: job.destination)
            self.bookkeeping.leave()
        }
    }

    /// A destination queue gave up on `job`.
    func deadLetter(_ job: DeliveryJob, reason: DeadLetter.Reason, detail: String) {
        if reason == .rejected, let attempt = job.attempts.last {
            observer.attemptFinished(destination: job.destination, outcome: "rejected", seconds: Double(attempt.durationMs) / 1000)
        }
        writeDeadLetter(job.notification, key: job.destination, destination: job.destination, reason: reason,
                        detail: detail, attempts: job.attempts, replayOf: job.replayOf)
    }

    /// Dead-letters a waiting job, reading a parked one's event back first (a dead letter
    /// holds the whole event). A read that fails is tried again (the event is unfinished, so
    /// its journal segment stays), up to `DestinationQueue.maxFailedReadBacks` times in a row;
    /// then the letter is `unreadable`.
    func deadLetter(_ job: WaitingJob, reason: DeadLetter.Reason, detail: String) {
        switch job {
        case .whole(let job):
            deadLetter(job, reason: reason, detail: detail)
        case .parked(let parked):
            reader.read(parked.position) { [self] event in
                guard let event, event.id == parked.eventId else {
                    var again = parked
                    again.failedReads += 1
                    guard again.failedReads < DestinationQueue.maxFailedReadBacks else { return deadLetterUnreadable(again) }
                    let later = DispatchTimeInterval.milliseconds(Int(readBackRetryDelay.wholeMilliseconds))
                    let retry = again
                    queue.asyncAfter(deadline: .now() + later) { self.deadLetter(.parked(retry), reason: reason, detail: detail) }
                    return
                }
                deadLetter(parked.restored(event, body: []), reason: reason, detail: detail)
            }
        }
    }

    /// A parked job whose event the journal could not give back, again and again: a letter
    /// with what is known (event id, destination, attempts), so the operator sees it and the
    /// journal segment can be retired, instead of a read retried forever.
    func deadLetterUnreadable(_ parked: ParkedJob) {
        let detail = "the journal record of this event (segment \(parked.position.segment), offset \(parked.position.offset)) "
            + "could not be read \(parked.failedReads) times in a row; the event cannot be delivered or replayed"
        let letter = DeadLetter(unreadableEventId: parked.eventId, destination: parked.destination, detail: detail,
                                attempts: parked.attempts, createdAt: clock.now())
        bookkeeping.enter()
        deadLetters.write(letter) { [self] result in
            switch result {
            case .success:
                observer.deadLettered(destination: parked.destination, reason: .unreadable)
                logger.error("dead-lettered an event the journal cannot give back", [
                    ("event.id", parked.eventId), ("destination", parked.destination), ("detail", detail),
                ])
                let record = DeliveryProgress.deadLettered(destination: parked.destination, deadLetterId: letter.id)
                journal.appendProgress(id: parked.eventId, payload: record.encoded()) { _ in
                    self.finish(parked.eventId, key: parked.destination)
                    self.bookkeeping.leave()
                }
            case .failure(let error):
                logger.error("dead letter not written; retrying", [("event.id", parked.eventId), ("error", "\(error)")])
                queue.asyncAfter(deadline: .now() + .seconds(5)) { self.deadLetterUnreadable(parked) }
                bookkeeping.leave()
            }
        }
    }

    /// Writes the dead letter durably, then marks the delivery finished; a failed write is
    /// retried, so the event is never forgotten before its dead letter exists.
    func writeDeadLetter(_ notification: StoredNotification, key: String, destination: String?, reason: DeadLetter.Reason,
                         detail: String, attempts: [DeliveryAttempt], replayOf: String?) {
        var written = DeadLetter(notification: notification, destination: destination, reason: reason, detail: detail,
                                 attempts: attempts, createdAt: clock.now())
        written.replayedBy = replayOf.map(replayMarkers(of:)) ?? []
        let letter = written
        bookkeeping.enter()
        deadLetters.write(letter) { [self] result in
            switch result {
            case .success:
                observer.deadLettered(destination: destination, reason: reason)
                logger.warning("dead-lettered", [
                    ("event.id", notification.id), ("destination", destination ?? ""), ("reason", reason.rawValue),
                    ("attempts", String(attempts.count)), ("detail", detail),
                ])
                if !key.isEmpty {
                    ledger.withLock { $0.update(notification, destination: key) {
                        $0.attempts = attempts
                        $0.phase = .deadLettered
                        $0.nextAttempt = nil
                        $0.deadLetterId = letter.id
                    } }
                }
                if let replayOf {
                    finishReplay(replayOf, destination: key, rewrittenAs: letter.id)
                    return bookkeeping.leave()
                }
                let record = DeliveryProgress.deadLettered(destination: key, deadLetterId: letter.id)
                journal.appendProgress(id: notification.id, payload: record.encoded()) { _ in
                    self.finish(notification.id, key: key)
                    self.bookkeeping.leave()
                }
            case .failure(let error):
                logger.error("dead letter not written; retrying", [("event.id", notification.id), ("error", "\(error)")])
                queue.asyncAfter(deadline: .now() + .seconds(5)) {
                    self.writeDeadLetter(notification, key: key, destination: destination, reason: reason,
                                         detail: detail, attempts: attempts, replayOf: replayOf)
                }
                bookkeeping.leave()
            }
        }
    }

    // MARK: Retiring finished segments

    func finish(_ eventId: String, key: String) {
        let finishedEvent = tracker.withLock { $0.finish(eventId, key: key) }
        if finishedEvent { scheduleRetirement() }
    }

    /// Retirement rewrites the journal's dedupe snapshot, so it is batched: at most once a second.
    func scheduleRetirement() {
        let alreadyScheduled = tracker.withLock { tracker -> Bool in
            defer { tracker.retirementScheduled = true }
            return tracker.retirementScheduled
        }
        guard !alreadyScheduled else { return }
        queue.asyncAfter(deadline: .now() + .seconds(1)) {
            self.tracker.withLock { $0.retirementScheduled = false }
            self.retireFinishedSegments()
        }
    }

    func retireFinishedSegments() {
        let segments = journal.segments
        let active = journal.activeSegment
        guard let upTo = tracker.withLock({ $0.retirableUpTo(segments: segments, active: active) }) else { return }
        journal.retireSegments(upTo: upTo) { [logger] result in
            switch result {
            case .success(let removed) where !removed.isEmpty:
                logger.debug("journal segments retired", [("segments", removed.map(String.init).joined(separator: " "))])
            case .success:
                break
            case .failure(let error):
                logger.error("journal segments not retired", [("error", "\(error)")])
            }
        }
    }
}
