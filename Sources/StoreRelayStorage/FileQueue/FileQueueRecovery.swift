/// What opening a queue found and repaired from a previous run.
public struct FileQueueRecovery: Sendable, Equatable {
    /// Open segments of the previous run, now closed (their partial last line cut off).
    public var closedSegments: [UInt64] = []
    /// Bytes cut from the end of open segments: a line whose write never completed, so it
    /// was never reported delivered.
    public var discardedBytes = 0
    /// Files removed: leftover `.tmp` files, open segments with no whole line, and
    /// uncompressed segments whose `.jsonl.gz` was already complete.
    public var removedFiles: [String] = []
    /// The highest sequence found (segments of any kind, and `.sequence`); new segments
    /// continue after it.
    public var lastSequence: UInt64 = 0

    public init() {}
}
