import Dispatch

extension Journal {
    /// Stores `payload` under the event id `id` and calls `completion` (on the journal's
    /// callback queue) once the outcome is known: `.stored` only after the record's bytes are
    /// written and fdatasync'ed; `.duplicate` if `id` was stored before (by this process, an
    /// earlier one, or a retired segment within the dedupe retention); `.failed` when nothing
    /// was stored. An append of an id whose first append is still in flight waits for it: it
    /// becomes `.duplicate` if that one is stored, or a fresh append if it failed.
    public func append(id: String, payload: [UInt8], completion: @escaping @Sendable (AppendOutcome) -> Void) {
        let idLength = id.utf8.count
        guard idLength > 0, idLength <= RecordFrame.maxIDBytes else {
            let error = StorageError(.invalidID, message: "an event id must be 1 to \(RecordFrame.maxIDBytes) bytes of UTF-8")
            callbackQueue.async { completion(.failed(error)) }
            return
        }
        guard payload.count <= options.maxPayloadBytes else {
            let error = StorageError(.recordTooLarge, message: "a payload of \(payload.count) bytes exceeds the journal's limit of \(options.maxPayloadBytes)")
            callbackQueue.async { completion(.failed(error)) }
            return
        }
        let digest = EventIDDigest(id)
        var request = PendingAppend(id: id, digest: digest, payload: payload, firstSeen: 0, completion: completion)
        let immediate: AppendOutcome? = state.withLock { s in
            if s.closed {
                s.stats.failures += 1
                return .failed(.journalClosed)
            }
            switch s.stored(digest) {
            case .present:
                s.stats.duplicates += 1
                return .duplicate
            case .unknown:
                s.stats.failures += 1
                return .failed(StorageError(.io, message: "seen-ids could not be read to tell whether \(id.prefix(64)) is a duplicate"))
            case .absent:
                break
            }
            if s.inFlight[id] != nil {
                s.inFlight[id]!.append(request)
            } else {
                request.firstSeen = options.clock.now().milliseconds
                s.inFlight[id] = []
                s.pending.append(request)
            }
            return nil
        }
        if let immediate { callbackQueue.async { completion(immediate) } }
        startBatchIfIdle()
    }

    /// Stores a delivery-progress record for event `id`, in the same group-committed batches
    /// as events: `.stored` once it is fdatasync'ed, `.failed` otherwise (never `.duplicate`).
    public func appendProgress(id: String, payload: [UInt8], completion: @escaping @Sendable (AppendOutcome) -> Void) {
        guard id.utf8.count > 0, id.utf8.count <= RecordFrame.maxIDBytes, payload.count <= options.maxPayloadBytes else {
            let error = StorageError(.invalidID, message: "a progress record needs an event id of 1 to \(RecordFrame.maxIDBytes) bytes and a payload within the limit")
            callbackQueue.async { completion(.failed(error)) }
            return
        }
        let request = PendingAppend(kind: .progress, id: id, payload: payload, firstSeen: 0, completion: completion)
        let closed = state.withLock { s in
            if s.closed { s.stats.failures += 1 } else { s.pending.append(request) }
            return s.closed
        }
        if closed { callbackQueue.async { completion(.failed(.journalClosed)) } }
        startBatchIfIdle()
    }

    /// Calls `completion` once every append made before this call has its outcome.
    public func flush(completion: @escaping @Sendable () -> Void) {
        let done = state.withLock { s in
            let target = s.pending.isEmpty ? s.batchesStarted : s.batchesStarted + 1
            if target <= s.batchesFinished { return true }
            s.flushWaiters.append((target, completion))
            return false
        }
        if done { callbackQueue.async(execute: completion) }
    }

    /// Stops accepting appends (later ones fail with `.closed`), waits for those in flight,
    /// closes the segment, then calls `completion`.
    public func close(completion: @escaping @Sendable () -> Void) {
        state.withLock { $0.closed = true }
        flush {
            self.writer.queue.async {
                self.writer.access { $0.close() }
                // Retirements planned before `closed` was set finish first.
                self.retiredFile.queue.async {
                    self.releaseLock()
                    self.callbackQueue.async(execute: completion)
                }
            }
        }
    }

    /// Blocking `close(completion:)`. Never call it from a journal completion.
    public func close() {
        let done = DispatchSemaphore(value: 0)
        close { done.signal() }
        done.wait()
    }

    /// Hands the whole pending batch to the writer unless it is busy; whatever arrives
    /// meanwhile forms the next batch.
    private func startBatchIfIdle() {
        if let batch = state.withLock({ $0.takeBatchIfIdle() }) {
            writer.queue.async { self.write(batch) }
        }
    }

    /// On the writer queue: writes and syncs one batch, settles it under the lock, answers
    /// every append of the batch with one hop to the callback queue, and queues the next
    /// batch if appends arrived meanwhile (behind anything tests queued on the writer).
    private func write(_ batch: [PendingAppend]) {
        let records = batch.map {
            OutgoingRecord(kind: $0.kind.rawValue, id: Array($0.id.utf8), firstSeen: $0.firstSeen, body: $0.payload)
        }
        let report = writer.access { $0.write(records) }
        let (transition, next) = state.withLock { s in
            let (callbacks, transition) = settle(batch, report, in: &s)
            // Queued before the lock is released: a `flush` that sees this batch finished
            // queues its completion after these.
            callbackQueue.async { for callback in callbacks { callback() } }
            s.writerBusy = false
            return (transition, s.takeBatchIfIdle())
        }
        switch transition {
        case .recovered:
            logger.notice("journal writable again", [("journal.directory", directory)])
        case .failed(let records, let error):
            logger.error("journal batch failed; appends answered failed",
                         [("journal.directory", directory), ("journal.records", records), ("error", error.message)])
        case nil:
            break
        }
        if let next { writer.queue.async { self.write(next) } }
        // The writer moved to a new segment: the ones before it can be sealed.
        if report.createdSegment != nil { retiredFile.queue.async { try? self.sealSegments() } }
    }

    /// A change of writability worth a log line (written once the lock is released).
    private enum Transition {
        case recovered
        case failed(records: Int, StorageError)
    }

    /// Applies a written (or failed) batch to the index and counters; returns the
    /// completions to call, in order.
    private func settle(
        _ batch: [PendingAppend], _ report: BatchReport, in s: inout JournalState
    ) -> (callbacks: [@Sendable () -> Void], transition: Transition?) {
        var transition: Transition?
        var retried = false
        var callbacks: [@Sendable () -> Void] = []
        func answer(_ completion: @escaping @Sendable (AppendOutcome) -> Void, _ outcome: AppendOutcome) {
            callbacks.append { completion(outcome) }
        }
        s.batchesFinished += 1
        s.stats.batches += 1
        if report.syncAttempted { s.stats.syncs += 1 }
        if let created = report.createdSegment {
            s.segments.insert(created)
            s.stats.segmentsCreated += 1
        }
        s.activeSegment = report.activeSegment
        switch report.result {
        case .success(let written):
            if !s.writable { transition = .recovered }
            s.writable = true
            s.stats.bytesWritten += written.bytes
            if let start = written.offsets.first { s.end = RecordPosition(segment: written.segment, offset: start + written.bytes) }
            for (request, offset) in zip(batch, written.offsets) {
                s.stats.appends += 1
                let position = RecordPosition(segment: written.segment, offset: offset)
                guard request.kind == .event, let digest = request.digest else {
                    answer(request.completion, .stored(position))
                    continue
                }
                s.live[digest] = LiveEntry(segment: written.segment, firstSeen: request.firstSeen)
                answer(request.completion, .stored(position))
                for waiter in s.inFlight.removeValue(forKey: request.id) ?? [] {
                    s.stats.duplicates += 1
                    answer(waiter.completion, .duplicate)
                }
            }
        case .failure(let error):
            if s.writable || s.stats.failures % 1000 == 0 { transition = .failed(records: batch.count, error) }
            s.writable = false
            for request in batch {
                s.stats.failures += 1
                answer(request.completion, .failed(error))
                guard request.kind == .event else { continue }
                var waiters = s.inFlight.removeValue(forKey: request.id) ?? []
                if !waiters.isEmpty {
                    // The first waiter becomes a fresh append; the others wait on it.
                    var retry = waiters.removeFirst()
                    retry.firstSeen = options.clock.now().milliseconds
                    s.inFlight[request.id] = waiters
                    s.pending.append(retry)
                    retried = true
                }
            }
        }
        let finished = s.batchesFinished
        if retried {
            // Appends that the retries answer have no outcome yet: a flush due now waits for
            // the next batch, which carries them.
            for index in s.flushWaiters.indices where s.flushWaiters[index].target <= finished {
                s.flushWaiters[index].target = s.batchesStarted + 1
            }
        }
        callbacks += s.flushWaiters.filter { $0.target <= finished }.map(\.completion)
        s.flushWaiters.removeAll { $0.target <= finished }
        return (callbacks, transition)
    }
}
