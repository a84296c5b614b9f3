import Dispatch

extension FileQueue {
    /// Appends `line` (one event, without its newline) and calls `completion` on the
    /// queue's callback queue once the outcome is known: `.success` only after the line and
    /// its newline are written and fdatasync'ed (the event then counts as delivered);
    /// `.failure` when it is not delivered (the caller retries; the line may then repeat).
    /// Lines arriving while a sync is in progress go into the next batch: one write and one
    /// fdatasync per batch. Empty lines and lines containing a newline byte are rejected.
    public func append(line: [UInt8], completion: @escaping @Sendable (Result<Void, StorageError>) -> Void) {
        if line.isEmpty || line.contains(UInt8(ascii: "\n")) {
            let error = StorageError(.invalidLine, message: line.isEmpty
                ? "an empty line cannot be appended to a file queue"
                : "a file queue line must not contain a newline byte")
            state.withLock { $0.stats.failures += 1 }
            callbackQueue.async { completion(.failure(error)) }
            return
        }
        let accepted = state.withLock { s in
            if s.acceptsAppends { s.pending.append(PendingLine(line: line, completion: completion)) } else { s.stats.failures += 1 }
            return s.acceptsAppends
        }
        guard accepted else {
            callbackQueue.async { completion(.failure(.queueClosed)) }
            return
        }
        startBatchIfIdle()
    }

    /// `append(line:completion:)` for async callers.
    public func append(line: [UInt8]) async throws(StorageError) {
        let result = await withCheckedContinuation { continuation in
            append(line: line) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    /// Hands the whole pending batch to the writer unless it is busy; whatever arrives
    /// meanwhile forms the next batch.
    private func startBatchIfIdle() {
        if let batch = state.withLock({ $0.takeBatchIfIdle() }) {
            writer.queue.async { self.write(batch) }
        }
    }

    /// On the writer queue: writes and syncs one batch, settles it under the lock, answers
    /// the whole batch with one hop to the callback queue, and queues the next batch.
    private func write(_ batch: [PendingLine]) {
        let report = writer.access { $0.write(batch.map(\.line)) }
        let (results, wasWritable, next) = state.withLock { s in
            apply(report, to: &s)
            s.writerBusy = false
            s.stats.lines += report.delivered
            s.stats.failures += batch.count - report.delivered
            let wasWritable = s.writable
            s.writable = report.error == nil
            let results: [Result<Void, StorageError>] = batch.indices.map { index in
                if index < report.delivered { return .success(()) }
                return .failure(report.error ?? StorageError(.io, message: "the file queue write stopped early"))
            }
            return (results, wasWritable, s.takeBatchIfIdle())
        }
        if let error = report.error, wasWritable {
            logger.error("file queue batch failed; its appends are answered failed",
                         [("filequeue.directory", directory),
                          ("filequeue.lines", String(batch.count - report.delivered)), ("error", error.message)])
        } else if report.error == nil && !wasWritable {
            logger.notice("file queue writable again", [("filequeue.directory", directory)])
        }
        callbackQueue.async {
            for (pending, result) in zip(batch, results) { pending.completion(result) }
        }
        if let next {
            writer.queue.async { self.write(next) }
        } else {
            closeIfDrained()
        }
    }

    /// Folds what the writer did into the counters (for batches, age checks and close).
    func apply(_ report: WriteReport, to s: inout FileQueueState) {
        s.stats.syncs += report.syncs
        s.stats.bytes += report.bytes
        s.stats.segmentsClosed += report.closedSegments.count
        s.openSequence = report.openSequence
    }
}
