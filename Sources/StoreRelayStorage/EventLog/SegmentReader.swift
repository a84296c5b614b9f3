#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Reads one segment's index and records: the open segment's from memory and its file,
/// a sealed one's from its two files (opened on first use, closed by `close`).
final class SegmentReader {
    let sequence: UInt64
    let recordCount: Int
    let firstAt: Int64
    let lastAt: Int64
    private let open: OpenSegment?
    private let sealed: SealedSegment?
    private let directory: String
    // Paths are made on first use: a lookup passes over hundreds of segments, and most
    // are skipped by their time range before a file is touched.
    private lazy var logPath = open?.path ?? directory + "/" + EventLogFileName.log(sequence)
    private lazy var indexPath = directory + "/" + EventLogFileName.index(sequence)
    private var logFD: Int32 = -1
    private var indexFD: Int32 = -1

    init(open: OpenSegment) {
        self.open = open
        sealed = nil
        sequence = open.sequence
        recordCount = open.offsets.count
        firstAt = open.firstAt
        lastAt = open.lastAt
        directory = ""
        logFD = open.fd
    }

    init(sealed: SealedSegment, directory: String) {
        open = nil
        self.sealed = sealed
        sequence = sealed.sequence
        recordCount = sealed.recordCount
        firstAt = sealed.firstAt
        lastAt = sealed.lastAt
        self.directory = directory
    }

    func candidates(_ key: String) throws(StorageError) -> [UInt32] {
        if let open { return open.table.candidates(key) }
        return try EventIndexFile.candidates(key, in: sealed!, fd: try index(), path: indexPath)
    }

    func offsets(_ range: Range<Int>) throws(StorageError) -> [UInt32] {
        if let open { return Array(open.offsets[range]) }
        return try EventIndexFile.offsets(range, in: sealed!, fd: try index(), path: indexPath)
    }

    func record(_ ordinal: Int) throws(StorageError) -> EventSummary? {
        guard ordinal < recordCount else { return nil }
        return try record(atOffset: Int(try offsets(ordinal..<(ordinal + 1))[0]))
    }

    func record(atOffset offset: Int) throws(StorageError) -> EventSummary? {
        if logFD < 0 { logFD = try JournalFiles.openFile(logPath, O_RDONLY) }
        return try EventLog.readRecord(fd: logFD, at: offset, path: logPath)
    }

    /// Closes the files it opened (never the open segment's, which the log owns).
    func close() {
        guard open == nil else { return }
        if logFD >= 0 { closeDescriptor(logFD) }
        if indexFD >= 0 { closeDescriptor(indexFD) }
        logFD = -1
        indexFD = -1
    }

    private func index() throws(StorageError) -> Int32 {
        if indexFD < 0 { indexFD = try JournalFiles.openFile(indexPath, O_RDONLY) }
        return indexFD
    }
}
