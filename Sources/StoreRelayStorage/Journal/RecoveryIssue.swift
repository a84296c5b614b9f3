/// Something `Journal.open` found and repaired, for logs, metrics and tests.
public struct RecoveryIssue: Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Hashable {
        /// The last segment ended in a torn or partial write (a crash mid-batch); those bytes
        /// were never acknowledged and were dropped.
        case tornTail
        /// Damage before the end of a segment, or in a segment that is not the last: the
        /// damaged tail was copied aside (`forensicCopy`) and the segment truncated. Good
        /// records found after the damage were written again to the active segment.
        case corruption
        /// A segment whose header is unreadable was moved aside whole.
        case unreadableSegment
        /// The `seen-ids` snapshot's header is unreadable: the file was moved aside.
        case corruptSnapshot
        /// The `seen-ids` snapshot ended in a chunk cut short or damaged: the file was
        /// rewritten with the intact chunks before it. A crash mid-retirement leaves this;
        /// the ids of that chunk are still in their segments, which were not yet deleted.
        case tornSnapshotTail
    }

    public let kind: Kind
    /// The file concerned.
    public let path: String
    /// Where the damage starts in that file.
    public let offset: Int
    /// Bytes removed from the file (copied to `forensicCopy` when there is one).
    public let droppedBytes: Int
    public let forensicCopy: String?
    /// Records after the damage that were kept by writing them again.
    public let salvagedRecords: Int
    public let detail: String

    public var description: String { "\(kind) in \(path) at \(offset): \(detail)" }
}
