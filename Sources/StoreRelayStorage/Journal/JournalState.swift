import StoreRelayCore

/// One `append` waiting to be written, or waiting on an earlier append of the same id.
struct PendingAppend: Sendable {
    var kind: JournalRecordKind = .event
    var id: String
    /// Events only: how the dedupe index knows the id.
    var digest: EventIDDigest?
    var payload: [UInt8]
    var firstSeen: Int64
    var completion: @Sendable (AppendOutcome) -> Void
}

/// Where a stored id lives, and when it was first seen (for dedupe retention).
struct LiveEntry: Sendable {
    var segment: UInt64
    var firstSeen: Int64
}

/// Everything the journal knows, guarded by its lock. The lock is never held across I/O but
/// one read: a retired id's lookup, when the Bloom filter says "maybe" (about 1 new id in 100,
/// and real duplicates), reads 3 KiB of `seen-ids`, from the page cache in practice. Doing it
/// under the lock keeps dedupe atomic with the append that follows.
struct JournalState: Sendable {
    /// Ids stored in live segments.
    var live: [EventIDDigest: LiveEntry]
    /// Ids of retired segments within the dedupe retention: those in `seen-ids`, on disk.
    var retired: RetiredIDIndex
    /// Ids a retirement in progress is appending to `seen-ids`: in memory until the chunk
    /// is synced and in `retired`.
    var retiring: [EventIDDigest: Int64] = [:]
    /// Ids in the pending or writing batch, each with later appends of the same id waiting
    /// for its outcome. Part of the index, which makes dedupe atomic.
    var inFlight: [String: [PendingAppend]] = [:]
    /// The next batch.
    var pending: [PendingAppend] = []
    var writerBusy = false
    var batchesStarted = 0
    var batchesFinished = 0
    var flushWaiters: [(target: Int, completion: @Sendable () -> Void)] = []
    var closed = false
    var writable = true
    /// Segment files on disk.
    var segments: Set<UInt64>
    /// The segment the writer appends to; never retired.
    var activeSegment: UInt64
    /// Segments up to this one have their ids in `seen-ids`, not in `live` (see `SealedMarker`).
    var sealedThrough: UInt64
    /// Just after the last record known durable: readers never go past it.
    var end: RecordPosition
    var stats = JournalStats()

    /// The whole pending batch, for the writer, unless the writer is busy (then whatever
    /// arrives meanwhile forms the next batch).
    mutating func takeBatchIfIdle() -> [PendingAppend]? {
        guard !writerBusy, !pending.isEmpty else { return nil }
        writerBusy = true
        batchesStarted += 1
        defer { pending = [] }
        return pending
    }

    func knows(_ id: String, _ digest: EventIDDigest) -> Bool {
        inFlight[id] != nil || stored(digest) != .absent
    }

    /// Whether the journal holds the id, live or retired (`.unknown` when `seen-ids` could
    /// not be read to tell).
    func stored(_ digest: EventIDDigest) -> RetiredIDIndex.Membership {
        if live[digest] != nil || retiring[digest] != nil { return .present }
        return retired.lookup(digest)
    }
}
