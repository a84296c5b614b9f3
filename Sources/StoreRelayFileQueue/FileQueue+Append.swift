import Dispatch

extension FileQueue {
    /// Appends `line` (one event, without its newline) and calls `completion` on the
    /// queue's callback queue once the outcome is known: `.success` only after the line and
    /// its newline are written and fdatasync'ed (the event then counts as delivered);
    /// `.failure` when it is not delivered (the caller retries; the line may then repeat).
    /// Lines arriving while a sync is in progress go into the next batch: one write and one
    /// fdatasync per batch. Empty lines and lines containing a newline byte are rejected.
    public func append(line: [UInt8], completion: @escaping @Sendable (Result<Void, FileQueueError>) -> Void) {
        if line.isEmpty || line.contains(UInt8(ascii: "\n")) {
            let error = FileQueueError(.invalidLine, message: line.isEmpty
                ? "an empty line cannot be appended to a file queue"
                : "a file queue line must not contain a newline byte")
            state.queue.async { self.state.access { $0.stats.failures += 1 } }
            callbackQueue.async { completion(.failure(error)) }
            return
        }
        let pending = PendingLine(line: line, completion: completion)
        state.queue.async { self.enqueue(pending) }
    }

    /// `append(line:completion:)` for async callers.
    public func append(line: [UInt8]) async throws(FileQueueError) {
        let result = await withCheckedContinuation { continuation in
            append(line: line) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    private func enqueue(_ pending: PendingLine) {
        let accepted = state.access { s in
            if s.acceptsAppends { s.pending.append(pending) } else { s.stats.failures += 1 }
            return s.acceptsAppends
        }
        if !accepted {
            callbackQueue.async { pending.completion(.failure(.closed)) }
            return
        }
        startBatchIfIdle()
    }

    /// Hands the whole pending batch to the writer unless it is busy; whatever arrives
    /// meanwhile forms the next batch.
    private func startBatchIfIdle() {
        let batch: [PendingLine]? = state.access { s in
            guard !s.writerBusy, !s.pending.isEmpty else { return nil }
            s.writerBusy = true
            s.stats.batches += 1
            defer { s.pending = [] }
            return s.pending
        }
        guard let batch else { return }
        let lines = batch.map(\.line)
        writer.queue.async {
            let report = self.writer.access { $0.write(lines) }
            self.state.queue.async { self.finish(batch, report) }
        }
    }

    private func finish(_ batch: [PendingLine], _ report: WriteReport) {
        apply(report)
        let results: [Result<Void, FileQueueError>] = state.access { s in
            s.writerBusy = false
            s.stats.lines += report.delivered
            s.stats.failures += batch.count - report.delivered
            let wasWritable = s.writable
            s.writable = report.error == nil
            if let error = report.error, wasWritable {
                logger.error("file queue batch failed; its appends are answered failed",
                             [("filequeue.directory", directory),
                              ("filequeue.lines", String(batch.count - report.delivered)), ("error", error.message)])
            } else if report.error == nil && !wasWritable {
                logger.notice("file queue writable again", [("filequeue.directory", directory)])
            }
            return batch.indices.map { index in
                if index < report.delivered { return .success(()) }
                return .failure(report.error ?? FileQueueError(.io, message: "the file queue write stopped early"))
            }
        }
        callbackQueue.async {
            for (pending, result) in zip(batch, results) { pending.completion(result) }
        }
        startBatchIfIdle()
        closeIfDrained()
    }

    /// Folds what the writer did into the counters (for batches, age checks and close).
    func apply(_ report: WriteReport) {
        state.access { s in
            s.stats.syncs += report.syncs
            s.stats.bytes += report.bytes
            s.stats.segmentsClosed += report.closedSegments.count
            s.openSequence = report.openSequence
        }
    }
}
