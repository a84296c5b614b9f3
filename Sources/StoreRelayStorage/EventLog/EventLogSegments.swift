#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// A sealed segment as the log keeps it in memory: a few numbers, whatever it holds. Its
/// records and index stay on disk.
struct SealedSegment: Sendable, Equatable {
    var sequence: UInt64
    var recordCount: Int
    var slotCount: Int
    /// The earliest and latest `receivedAt` in it (ms): what `since`, `until` and retention skip by.
    var firstAt: Int64
    var lastAt: Int64

    var slotsOffset: Int { EventIndexFile.headerSize + 4 * recordCount }
}

/// The segment being appended to: its file, and its index in memory (bounded by
/// `EventLogOptions.maxRecordsPerSegment`, after which it is sealed).
struct OpenSegment {
    var sequence: UInt64
    var fd: Int32
    var path: String
    /// Bytes on disk (written; synced at the end of each batch).
    var size: Int
    /// Record offsets, in append order.
    var offsets: [UInt32] = []
    var table = EventKeyTable()
    var firstAt = Int64.max
    var lastAt = Int64.min
    /// The time bucket (`receivedAt / segment span`) of its records; nil while empty.
    var bucket: Int64?

    var sealed: SealedSegment {
        SealedSegment(sequence: sequence, recordCount: offsets.count, slotCount: table.hashes.count,
                      firstAt: firstAt, lastAt: lastAt)
    }

    mutating func index(_ summary: EventSummary, at offset: Int) {
        let ordinal = UInt32(offsets.count)
        offsets.append(UInt32(offset))
        for key in summary.searchKeys { table.insert(key, ordinal: ordinal) }
        firstAt = min(firstAt, summary.receivedAt.milliseconds)
        lastAt = max(lastAt, summary.receivedAt.milliseconds)
    }
}

/// File names in the log's directory: `events-<20-digit sequence>.log` and `.idx`.
enum EventLogFileName {
    static let prefix = "events-"
    /// Segment files start `[magic SREL][u32 LE version 1][u64 LE sequence]`, so a file
    /// renamed into place is noticed.
    static let segmentMagic: [UInt8] = Array("SREL".utf8)
    static let segmentHeaderSize = 16

    static func log(_ sequence: UInt64) -> String { name(sequence) + ".log" }
    static func index(_ sequence: UInt64) -> String { name(sequence) + ".idx" }

    static func segmentHeader(_ sequence: UInt64) -> [UInt8] {
        var out = segmentMagic
        out.appendLittleEndian(UInt32(1))
        out.appendLittleEndian(sequence)
        return out
    }

    /// The sequence of a segment file name with extension `ext`, or nil for other names.
    static func sequence(of file: String, ext: String) -> UInt64? {
        guard file.hasPrefix(prefix), file.hasSuffix(ext) else { return nil }
        let digits = file.dropFirst(prefix.count).dropLast(ext.count)
        guard digits.count == 20, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return UInt64(digits)
    }

    private static func name(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return prefix + String(repeating: "0", count: max(0, 20 - digits.count)) + digits
    }
}
