import Dispatch
import StoreRelayStorage
import StoreRelayCore

extension DeliveryEngine {
    package static func noRouteDetail(_ notification: StoredNotification) -> String {
        let event = notification.event
        return "no route matches environment \(event.environment?.rawValue ?? "unknown"), app \(event.bundleId ?? "-"), type \(event.type)"
            + (event.subtype.map { "/" + $0 } ?? "")
    }

    // MARK: Progress from destination queues

    func recordAttempt(_ job: DeliveryJob, _ attempt: DeliveryAttempt) {
        ledger.withLock { $0.update(job.notification, destination: job.destination) {
            $0.attempts = job.attempts
            $0.nextAttempt = job.due
        } }
        // Replays are not in the journal's bookkeeping: their dead letter stays until they
        // succeed; nor are redeliveries. The queue's book has the attempt already.
        guard job.isJournaled, let position = job.position else { return }
        let record = DeliveryProgress.attempted(destination: job.destination, attempt: attempt, next: job.due)
        bookkeeping.enter()
        journal.appendProgress(id: job.eventId, payload: record.encoded(eventAt: position)) { [logger, bookkeeping] outcome in
            if case .failed(let error) = outcome {
                logger.warning("delivery progress not stored", [("event.id", job.eventId), ("error", "\(error)")])
            }
            bookkeeping.leave()
        }
    }

    func recordDelivery(_ job: DeliveryJob) {
        ledger.withLock { $0.update(job.notification, destination: job.destination) {
            $0.attempts = job.attempts
            $0.phase = .delivered
            $0.nextAttempt = nil
        } }
        eventLog?.setState(.delivered, eventId: job.eventId, destination: job.destination, receivedAt: job.notification.receivedAt)
        logger.debug("delivered", [("event.id", job.eventId), ("destination", job.destination),
                                    ("attempt", job.attempts.count)])
        if let replayed = job.replayOf {
            return finishReplay(replayed, destination: job.destination, rewrittenAs: nil)
        }
        guard job.isJournaled else { return }
        // The queue's book says it is done already (see `DestinationQueue.handle`).
        bookkeeping.enter()
        let record = DeliveryProgress.delivered(destination: job.destination)
        journal.appendProgress(id: job.eventId, payload: record.encoded(eventAt: job.position)) { [bookkeeping] _ in
            bookkeeping.leave()
        }
    }

    /// A destination queue gave up on `job`.
    func deadLetter(_ job: DeliveryJob, reason: DeadLetter.Reason, detail: String) {
        writeDeadLetter(job.notification, key: job.destination, destination: job.destination, reason: reason,
                        detail: detail, attempts: job.attempts, replayOf: job.replayOf, jobAt: job.position)
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
                finished(parked.destination, at: parked.position)
                eventLog?.setState(.deadLettered, eventId: parked.eventId, destination: parked.destination)
                let record = DeliveryProgress.deadLettered(destination: parked.destination, deadLetterId: letter.id)
                journal.appendProgress(id: parked.eventId, payload: record.encoded(eventAt: parked.position)) { _ in
                    self.bookkeeping.leave()
                }
            case .failure(let error):
                logger.error("dead letter not written; retrying", [("event.id", parked.eventId), ("error", "\(error)")])
                queue.asyncAfter(deadline: .now() + .seconds(5)) { self.deadLetterUnreadable(parked) }
                bookkeeping.leave()
            }
        }
    }

    /// Writes the dead letter durably, then marks the delivery finished (the job at `jobAt`
    /// in its destination's book, or one of the router's letters for the event at
    /// `routerLetterAt`); a failed write is retried, so the event is never forgotten before
    /// its dead letter exists.
    func writeDeadLetter(_ notification: StoredNotification, key: String, destination: String?, reason: DeadLetter.Reason,
                         detail: String, attempts: [DeliveryAttempt], replayOf: String?, jobAt: RecordPosition? = nil,
                         routerLetterAt: RecordPosition? = nil) {
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
                    ("event.id", notification.id), ("original.transaction.id", notification.event.originalTransactionId ?? ""),
                    ("destination", destination ?? ""), ("reason", reason.rawValue), ("attempts", attempts.count), ("detail", detail),
                ])
                if !key.isEmpty {
                    ledger.withLock { $0.update(notification, destination: key) {
                        $0.attempts = attempts
                        $0.phase = .deadLettered
                        $0.nextAttempt = nil
                        $0.deadLetterId = letter.id
                    } }
                    eventLog?.setState(.deadLettered, eventId: notification.id, destination: key, receivedAt: notification.receivedAt)
                }
                if let replayOf {
                    finishReplay(replayOf, destination: key, rewrittenAs: letter.id)
                    return bookkeeping.leave()
                }
                if let routerLetterAt {
                    books.withLock { books in
                        let left = (books.router.pending[routerLetterAt] ?? 1) - 1
                        books.router.pending[routerLetterAt] = left > 0 ? left : nil
                    }
                } else {
                    finished(key, at: jobAt)
                }
                let record = DeliveryProgress.deadLettered(destination: key, deadLetterId: letter.id)
                journal.appendProgress(id: notification.id, payload: record.encoded(eventAt: jobAt ?? routerLetterAt)) { _ in
                    self.bookkeeping.leave()
                }
            case .failure(let error):
                logger.error("dead letter not written; retrying", [("event.id", notification.id), ("error", "\(error)")])
                queue.asyncAfter(deadline: .now() + .seconds(5)) {
                    self.writeDeadLetter(notification, key: key, destination: destination, reason: reason,
                                         detail: detail, attempts: attempts, replayOf: replayOf, jobAt: jobAt,
                                         routerLetterAt: routerLetterAt)
                }
                bookkeeping.leave()
            }
        }
    }
}
