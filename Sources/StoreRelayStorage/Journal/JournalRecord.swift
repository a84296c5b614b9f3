import StoreRelayCore

/// Where a record lives: its segment's sequence number and the byte offset of its frame.
public struct RecordPosition: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let segment: UInt64
    public let offset: Int

    public init(segment: UInt64, offset: Int) {
        self.segment = segment
        self.offset = offset
    }

    public static func < (lhs: Self, rhs: Self) -> Bool {
        (lhs.segment, lhs.offset) < (rhs.segment, rhs.offset)
    }

    public var description: String { "\(segment)@\(offset)" }
}

/// What a record is about. Stored as one byte so later work can add kinds (delivery
/// progress, for example) without changing the framing; only `.event` ids are deduplicated.
public struct JournalRecordKind: RawRepresentable, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// An accepted notification: its event id and the caller's bytes.
    public static let event = JournalRecordKind(rawValue: 1)

    /// Progress of an event's deliveries (an attempt, a delivery, a dead letter), filed under
    /// the event's id. Never deduplicated: an event has many.
    public static let progress = JournalRecordKind(rawValue: 2)

    /// Kinds this version writes; recovery resynchronizes only on these.
    static let known: Set<UInt8> = [event.rawValue, progress.rawValue]
}

/// One record read back from the journal.
public struct JournalRecord: Sendable {
    public let kind: JournalRecordKind
    public let id: String
    /// When the id was first appended (the journal's clock), kept for dedupe retention.
    public let firstSeen: Timestamp
    /// The caller's opaque bytes, exactly as given to `append`.
    public let payload: [UInt8]
    public let position: RecordPosition
    /// Just after this record: where the next one starts.
    public let end: RecordPosition
}

/// A record found when the journal was opened. An event's payload stays on disk (read it
/// with `Journal.record(at:)`): a journal holding a long delivery backlog opens without
/// loading every notification into memory. Progress records are small and come whole.
public struct RecoveredRecord: Sendable {
    public let kind: JournalRecordKind
    public let id: String
    public let firstSeen: Timestamp
    public let position: RecordPosition
    /// The payload of a record that is not an event; nil for events.
    public let progressPayload: [UInt8]?
}

/// The result of one `append`.
public enum AppendOutcome: Sendable {
    /// The record is on disk (written and fdatasync'ed) at this position.
    case stored(RecordPosition)
    /// A record with this id was stored before; nothing was written.
    case duplicate
    /// Nothing was stored; the id is not remembered, so a retry is a fresh append.
    case failed(StorageError)
}

/// Counters since `open`, for metrics and tests.
public struct JournalStats: Sendable, Hashable {
    /// Appends answered `.stored`.
    public var appends: Int = 0
    /// Appends answered `.duplicate`.
    public var duplicates: Int = 0
    /// Appends answered `.failed`.
    public var failures: Int = 0
    /// Batches handed to the writer (one write and one data sync each).
    public var batches: Int = 0
    /// Data syncs (fdatasync) of batches that were attempted.
    public var syncs: Int = 0
    /// Bytes of records written by successful batches.
    public var bytesWritten: Int = 0
    /// Segment files currently in the journal directory.
    public var segments: Int = 0
    /// Segment files created since open.
    public var segmentsCreated: Int = 0
}
