import Dispatch
import StoreRelayStorage
import StoreRelayCore

extension DeliveryEngine {
    /// Picks up where the last run stopped: reads the checkpoint, replays the journal's tail
    /// after it (the attempts, deliveries and dead letters decided since), and starts every
    /// destination at its cursor; each then reads its backlog from the journal as its window
    /// frees. The cost is the checkpoint and the tail, however long a backlog waits in the
    /// journal. Without a checkpoint (a journal written before checkpoints) the whole journal
    /// is the tail, once.
    ///
    /// Blocking (it reads the tail): call it at start-up, before serving.
    ///
    /// - Throws: when the tail cannot be read: starting without what it says could let
    ///   segments be retired with deliveries unfinished.
    public func resume() throws(StorageError) {
        let loaded = checkpointFile.load()
        let checkpoint: DeliveryCheckpoint
        var wholeJournal = false
        switch loaded {
        case .checkpoint(let saved):
            checkpoint = saved
        case .none, .unreadable:
            if case .unreadable(let reason) = loaded {
                logger.error("delivery checkpoint unreadable; the whole journal is read again (deliveries may repeat)",
                             [("file", checkpointFile.path), ("error", reason)])
            }
            let start = journal.startPosition
            checkpoint = DeliveryCheckpoint(journal: start, router: start, destinations: [:])
            wholeJournal = true
        }
        var tail = TailReplay(destinations: checkpoint.destinations, resolvesIds: wholeJournal)
        for name in topology.current.order where tail.destinations[name] == nil {
            // Not in the checkpoint: configured since. No event before the tail names it.
            tail.destinations[name] = DestinationBook(cursor: checkpoint.journal)
        }
        try tail.replay(journal, from: checkpoint.journal)
        let end = journal.endPosition
        books.withLock { books in
            // The queues keep their keepers: each gets the replayed book in place.
            for (name, book) in tail.destinations {
                books.keeper(of: name, startingAt: book.cursor).reset(to: book)
            }
            for name in books.destinations.keys where tail.destinations[name] == nil { books.destinations[name] = nil }
            books.router = RouterBook(reached: end, scanning: checkpoint.router)
            books.lettersWritten = tail.lettersWritten
            books.resumed = true
        }
        let topology = topology.current
        for (name, queue) in topology.queues {
            let book = tail.destinations[name]!
            queue.start(cursor: book.cursor, unfinished: Array(book.unfinished.values))
        }
        for name in tail.destinations.keys where topology.queues[name] == nil {
            drainRemoved(name, detail: "destination \(name) is no longer configured")
        }
        backlogQueue.async { self.writeMissingLetters(from: checkpoint.router, to: end) }
        startCheckpoints()
        let unfinished = tail.destinations.values.reduce(0) { $0 + $1.unfinished.count }
        logger.info("deliveries resumed", [
            ("checkpoint", wholeJournal ? "none" : "read"), ("tail.records", tail.records),
            ("unfinished", unfinished),
            ("cursors", tail.destinations.map { "\($0.key)@\($0.value.cursor)" }.sorted().joined(separator: " ")),
        ])
    }

    /// After a crash, the dead letters of unrouted, quarantined and no-longer-routable events
    /// that were submitted but not yet written: read from where the router's checkpoint
    /// stood to the journal's end at start. A letter the tail shows written is not rewritten.
    func writeMissingLetters(from start: RecordPosition, to end: RecordPosition) {
        defer {
            books.withLock { books in
                books.router.scanning = nil
                books.lettersWritten = []
            }
        }
        do throws(StorageError) {
            try journal.forEachRecord(from: start) { record in
                guard record.position < end else { return false }
                defer { books.withLock { $0.router.scanning = record.end } }
                guard record.kind == .event, let notification = StoredNotification(decoding: record.payload) else { return true }
                let (written, known) = books.withLock { ($0.lettersWritten.contains(record.position), Set($0.destinations.keys)) }
                guard !written else { return true }
                let queues = topology.current.queues
                let letters = routerLetters(for: notification) { queues[$0] != nil || known.contains($0) }
                guard !letters.isEmpty else { return true }
                books.withLock { $0.router.pending[record.position, default: 0] += letters.count }
                for letter in letters {
                    writeDeadLetter(notification, key: letter.key, destination: letter.destination, reason: letter.reason,
                                    detail: letter.detail, attempts: [], replayOf: nil, routerLetterAt: record.position)
                }
                return true
            }
        } catch {
            logger.error("journal not read for missing dead letters", [("position", start.description), ("error", "\(error)")])
        }
    }

    /// Dead-letters what a destination no longer configured still held: its window, then
    /// every event routed to it from its cursor to the journal's end (`unrouted`, so a replay
    /// routes it again). Its book goes once all are written. On the backlog queue, a chunk at
    /// a time, waiting for the letters so a long backlog is never all in memory; the waits are
    /// timers on that queue, so no thread is held while letters are written.
    func drainRemoved(_ name: String, detail: String) {
        backlogQueue.async { [self] in
            guard let keeper = keeper(of: name) else { return }
            let book = keeper.snapshot
            for parked in book.unfinished.values {
                deadLetter(.parked(parked), reason: .unrouted, detail: detail)
            }
            drainRemovedBacklog(name, keeper: keeper, detail: detail, from: book.cursor, failures: 0)
        }
    }

    /// Letters written and not yet confirmed, at most, before the next chunk is read.
    private static let drainLettersInFlight = 64

    /// One chunk of a removed destination's backlog, then the next (or the end).
    private func drainRemovedBacklog(_ name: String, keeper: BookKeeper, detail: String, from cursor: RecordPosition, failures: Int) {
        dispatchPrecondition(condition: .onQueue(backlogQueue))
        let again = { [self] (delay: Duration, cursor: RecordPosition, failures: Int) in
            backlogQueue.asyncAfter(deadline: .now() + delay.dispatchInterval) {
                self.drainRemovedBacklog(name, keeper: keeper, detail: detail, from: cursor, failures: failures)
            }
        }
        guard keeper.unfinishedCount <= Self.drainLettersInFlight else { return again(.milliseconds(10), cursor, failures) }
        let read = readBacklogNow(of: name, from: cursor, room: 256)
        if read.failed {
            guard failures + 1 >= DestinationQueue.maxFailedReadBacks else { return again(readBackRetryDelay, cursor, failures + 1) }
            // As a destination does: what cannot be read is skipped, and said so.
            let next = RecordPosition(segment: cursor.segment + 1, offset: 0)
            logger.error("removed destination's backlog unreadable; skipped to the next segment",
                         [("destination", name), ("to", next.description)])
            return again(.zero, next, 0)
        }
        keeper.took(read.jobs, cursor: read.next)
        for job in read.jobs {
            writeDeadLetter(job.notification, key: name, destination: name, reason: .unrouted, detail: detail,
                            attempts: job.attempts, replayOf: nil, jobAt: job.position)
        }
        guard read.atEnd else { return again(.zero, read.next, 0) }
        finishDrain(name, keeper: keeper)
    }

    /// Once every letter of a removed destination is written, its book goes.
    private func finishDrain(_ name: String, keeper: BookKeeper) {
        guard keeper.unfinishedCount == 0 else {
            return backlogQueue.asyncAfter(deadline: .now() + .milliseconds(10)) { self.finishDrain(name, keeper: keeper) }
        }
        books.withLock { books in
            // Configured again meanwhile: the new queue carries on from this book.
            if topology.current.queues[name] == nil { books.destinations[name] = nil }
        }
        logger.info("removed destination drained", [("destination", name)])
    }

    // MARK: Checkpoints

    /// Writes a checkpoint about once a second while anything changed.
    func startCheckpoints() {
        let timer = DispatchSource.makeTimerSource(queue: checkpointQueue)
        timer.schedule(deadline: .now() + .milliseconds(checkpointIntervalMilliseconds),
                       repeating: .milliseconds(checkpointIntervalMilliseconds), leeway: .milliseconds(100))
        timer.setEventHandler { [weak self] in
            guard let self else { return timer.cancel() }
            if self.books.withLock({ $0.stopping }) { return timer.cancel() }
            self.writeCheckpoint()
        }
        timer.resume()
    }

    /// On `checkpointQueue`: copies the books (after reading the journal's end, see
    /// `DeliveryCheckpoint`), writes them unless unchanged, then retires the segments the
    /// written checkpoint no longer needs.
    func writeCheckpoint() {
        dispatchPrecondition(condition: .onQueue(checkpointQueue))
        let journalEnd = journal.endPosition
        guard let (checkpoint, saved) = books.withLock({ books in
            books.resumed ? (books.checkpoint(journal: journalEnd), books.saved) : nil
        }) else { return }
        guard checkpoint != saved else { return }
        do {
            try checkpointFile.save(checkpoint)
        } catch {
            logger.error("delivery checkpoint not written; journal segments are kept until one is", [("error", "\(error)")])
            return
        }
        books.withLock { $0.saved = checkpoint }
        retireSegments(before: checkpoint)
    }

    /// Retires every segment before the oldest position `checkpoint` needs: nothing in them
    /// is read again, whatever happens next.
    private func retireSegments(before checkpoint: DeliveryCheckpoint) {
        let oldest = checkpoint.destinations.values.map(\.oldestNeeded).reduce(min(checkpoint.journal, checkpoint.router), min)
        guard oldest.segment > 1 else { return }
        journal.retireSegments(upTo: oldest.segment - 1) { [logger] result in
            if case .failure(let error) = result {
                logger.error("journal segments not retired", [("error", "\(error)")])
            }
        }
    }
}

/// What the journal says about one destination of one event, replayed on start.
struct DestinationProgress: Sendable, Equatable {
    var attempts: [DeliveryAttempt] = []
    var nextAttempt: Timestamp?
    var finished = false

    mutating func apply(_ record: DeliveryProgress) {
        switch record {
        case .attempted(_, let attempt, let next):
            // A replayed record may be in the checkpoint already: an attempt counts once.
            guard !attempts.contains(attempt) else { return }
            attempts.append(attempt)
            nextAttempt = next
        case .delivered, .deadLettered:
            finished = true
        }
    }
}

/// The start-up replay of the journal's tail: progress records decided after the checkpoint
/// was copied, applied to the books (idempotently: some are in them already).
struct TailReplay {
    var destinations: [String: DestinationBook]
    /// Positions whose router letters (or a removed destination's) are written.
    var lettersWritten: Set<RecordPosition> = []
    var records = 0
    /// Without a checkpoint the tail is the whole journal, and records of versions before
    /// checkpoints name their event by id only: the ids seen on the way resolve them.
    let resolvesIds: Bool
    private var positions: [String: RecordPosition] = [:]

    init(destinations: [String: DestinationBook], resolvesIds: Bool) {
        self.destinations = destinations
        self.resolvesIds = resolvesIds
    }

    mutating func replay(_ journal: Journal, from start: RecordPosition) throws(StorageError) {
        // Event records are needed only to match old records to their event by id.
        try journal.forEachRecord(from: start, only: resolvesIds ? nil : .progress) { record in
            records += 1
            if record.kind == .event {
                if resolvesIds { positions[record.id] = record.position }
            } else if record.kind == .progress, let (step, named) = DeliveryProgress.decode(record.payload),
                      let eventAt = named ?? positions[record.id] {
                apply(step, eventAt: eventAt)
            }
            return true
        }
    }

    private mutating func apply(_ step: DeliveryProgress, eventAt position: RecordPosition) {
        guard let book = destinations[step.destination] else {
            if case .deadLettered = step { lettersWritten.insert(position) }
            return
        }
        guard position < book.cursor else {
            destinations[step.destination]!.replayed[position, default: DestinationProgress()].apply(step)
            return
        }
        guard var job = book.unfinished[position] else { return }
        // The same rules as for events not taken yet: an attempt counts once.
        var progress = DestinationProgress(attempts: job.attempts, nextAttempt: job.due)
        progress.apply(step)
        if progress.finished {
            destinations[step.destination]!.unfinished[position] = nil
        } else {
            job.attempts = progress.attempts
            job.due = progress.nextAttempt ?? job.due
            destinations[step.destination]!.unfinished[position] = job
        }
    }
}
