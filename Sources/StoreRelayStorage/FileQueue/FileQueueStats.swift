/// Counters since the queue was opened.
public struct FileQueueStats: Sendable, Equatable {
    /// Lines appended and synced (reported delivered).
    public var lines = 0
    /// Appends that failed (not delivered), including rejected lines.
    public var failures = 0
    /// Batches handed to the writer: one per group commit.
    public var batches = 0
    /// fdatasync calls made for batches (a batch split by a rotation takes two).
    public var syncs = 0
    /// Bytes appended, newlines included.
    public var bytes = 0
    /// Segments closed (renamed to `<seq>.jsonl`), including those closed by recovery.
    public var segmentsClosed = 0
    /// Segments compressed to `<seq>.jsonl.gz`.
    public var segmentsCompressed = 0
    /// Compressions that failed; the uncompressed closed segment is kept.
    public var compressionFailures = 0

    public init() {}
}
