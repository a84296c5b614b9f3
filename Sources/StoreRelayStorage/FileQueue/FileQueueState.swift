/// One `append` waiting for the next batch.
struct PendingLine: Sendable {
    var line: [UInt8]
    var completion: @Sendable (Result<Void, StorageError>) -> Void
}

/// Everything the queue knows, behind the queue's lock. The writer queue owns the
/// file descriptor; this side owns batching, counters and the shutdown protocol.
struct FileQueueState: Sendable {
    enum Lifecycle: Sendable {
        case open
        /// `close` was called: no new appends; the batch in flight and the pending one
        /// still complete, then the open segment is closed.
        case closing(waiters: [@Sendable (Result<Void, StorageError>) -> Void])
        case closed(Result<Void, StorageError>)
    }

    /// The next batch: everything appended while the writer is busy.
    var pending: [PendingLine] = []
    var writerBusy = false
    /// An age check is queued on the writer; another tick does not queue a second one.
    var ageCheckQueued = false
    var lifecycle = Lifecycle.open
    /// The final close of the open segment has been handed to the writer.
    var shutdownStarted = false
    /// False after a failed batch until one succeeds.
    var writable = true
    /// The open segment, as of the writer's last report.
    var openSequence: UInt64?
    var stats = FileQueueStats()

    /// The whole pending batch, for the writer, unless the writer is busy.
    mutating func takeBatchIfIdle() -> [PendingLine]? {
        guard !writerBusy, !pending.isEmpty else { return nil }
        writerBusy = true
        stats.batches += 1
        defer { pending = [] }
        return pending
    }

    var acceptsAppends: Bool {
        if case .open = lifecycle { return true }
        return false
    }
}
