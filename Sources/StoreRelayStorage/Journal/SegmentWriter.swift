#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// A record on its way to disk, as the writer encodes it.
struct OutgoingRecord: Sendable {
    var kind: UInt8
    var id: [UInt8]
    var firstSeen: Int64
    var body: [UInt8]
}

/// What one batch write did, settled under the journal's lock.
struct BatchReport: Sendable {
    struct Written: Sendable {
        var segment: UInt64
        /// Frame offsets, in batch order.
        var offsets: [Int]
        var bytes: Int
    }
    var result: Result<Written, StorageError>
    var syncAttempted: Bool
    /// The segment the writer appends to now (the last one it created or continued).
    var activeSegment: UInt64
    /// A segment created for this batch, even if the batch itself then failed.
    var createdSegment: UInt64?
}

/// Owns the active segment's file descriptor and appends whole batches to it: one `pwrite`,
/// one data sync. Confined to the journal's writer queue (the owner wraps it in
/// `QueueConfined`), so it needs no locks.
final class SegmentWriter {
    let directory: String
    private let sizeLimit: Int
    private let logger: Logger
    /// Names what a foreign file is moved aside to.
    private let clock: any TimeSource
    /// The active segment, or the last one used when `fd` is closed.
    private(set) var sequence: UInt64
    private var fd: Int32 = -1
    private var length = 0
    /// Set when the active segment may hold bytes we could not remove (failed truncation,
    /// failed sync): the next batch goes to a fresh segment rather than after them.
    private var mustRotate = false
    private var closed = false
    /// Test seam: when open, batch bytes are written here (for example /dev/full) with the
    /// same real system calls, so disk-full handling is exercised without filling a disk.
    private var redirectFD: Int32 = -1

    /// Continues `continuing` (a segment already truncated to its last good record) or, when
    /// nil, creates segment `lastSequence + 1` on the first write.
    init(directory: String, sizeLimit: Int, logger: Logger, clock: any TimeSource = WallClock(),
         continuing: (sequence: UInt64, length: Int)?, lastSequence: UInt64) throws(StorageError) {
        self.directory = directory
        self.sizeLimit = sizeLimit
        self.logger = logger
        self.clock = clock
        if let continuing {
            fd = try JournalFiles.openFile(SegmentName.path(continuing.sequence, in: directory), O_WRONLY)
            sequence = continuing.sequence
            length = continuing.length
        } else {
            sequence = lastSequence
        }
    }

    deinit { closeFiles() }

    private var path: String { SegmentName.path(sequence, in: directory) }

    func write(_ records: [OutgoingRecord]) -> BatchReport {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(records.reduce(0) { $0 + 32 + $1.id.count + $1.body.count })
        var offsets: [Int] = []
        offsets.reserveCapacity(records.count)
        for record in records {
            offsets.append(buffer.count)
            RecordFrame.encode(kind: record.kind, firstSeen: record.firstSeen, id: record.id, body: record.body, into: &buffer)
        }
        var created: UInt64?
        var syncAttempted = false
        do throws(StorageError) {
            guard !closed else { throw StorageError.journalClosed }
            if fd < 0 || mustRotate || (length > RecordFrame.segmentHeaderSize && length + buffer.count > sizeLimit) {
                try rotate()
                created = sequence
            }
            let start = length
            do throws(StorageError) {
                try JournalFiles.writeAll(redirectFD >= 0 ? redirectFD : fd, buffer, at: start, path: path)
                syncAttempted = true
                try JournalFiles.syncData(fd, path: path)
            } catch {
                rollBack(to: start, afterFailed: error)
                throw error
            }
            length = start + buffer.count
            let written = BatchReport.Written(segment: sequence, offsets: offsets.map { $0 + start }, bytes: buffer.count)
            return BatchReport(result: .success(written), syncAttempted: true, activeSegment: sequence, createdSegment: created)
        } catch {
            return BatchReport(result: .failure(error), syncAttempted: syncAttempted, activeSegment: sequence, createdSegment: created)
        }
    }

    /// Removes a failed batch's bytes so no half batch stays in front of later records.
    /// After a failed sync the page cache can no longer be trusted, so that segment is
    /// abandoned too.
    private func rollBack(to goodLength: Int, afterFailed error: StorageError) {
        if error.operation == "fdatasync" { mustRotate = true }
        do throws(StorageError) {
            try JournalFiles.truncate(fd, to: goodLength, path: path)
            try JournalFiles.syncData(fd, path: path)
            if try JournalFiles.status(fd, path: path).size != goodLength { mustRotate = true }
        } catch {
            mustRotate = true
            logger.error("journal could not truncate a failed batch; abandoning the segment",
                         [("journal.segment", path), ("error", error.message)])
        }
    }

    /// Creates the next segment durably (header synced, directory entry synced) and makes
    /// it active. On failure the half-made file is removed and the old state is kept.
    private func rotate() throws(StorageError) {
        let next = sequence + 1
        let newPath = SegmentName.path(next, in: directory)
        let newFD: Int32
        do {
            newFD = try JournalFiles.openFile(newPath, O_WRONLY | O_CREAT | O_EXCL)
        } catch where error.errno == EEXIST {
            // Only this process writes here (the directory's lock), and recovery saw every
            // segment: whatever holds the name came from elsewhere (a restore, a stray copy).
            // Never write into it or over it: keep it under another name, and take the name.
            try moveAsideForeignFile(at: newPath)
            newFD = try JournalFiles.openFile(newPath, O_WRONLY | O_CREAT | O_EXCL)
        }
        do throws(StorageError) {
            try JournalFiles.writeAll(redirectFD >= 0 ? redirectFD : newFD, RecordFrame.segmentHeader(sequence: next), at: 0, path: newPath)
            try JournalFiles.syncData(newFD, path: newPath)
            try JournalFiles.syncDirectory(directory)
        } catch {
            closeDescriptor(newFD)
            try? JournalFiles.removeFile(newPath)
            try? JournalFiles.syncDirectory(directory)
            throw error
        }
        if fd >= 0 { closeDescriptor(fd) }
        fd = newFD
        sequence = next
        length = RecordFrame.segmentHeaderSize
        mustRotate = false
        logger.debug("journal segment created", [("journal.segment", newPath)])
    }

    private func moveAsideForeignFile(at path: String) throws(StorageError) {
        let aside = path + ".foreign-\(clock.now().milliseconds)"
        try JournalFiles.renameFile(path, aside)
        try JournalFiles.syncDirectory(directory)
        logger.error("journal found a file it did not write under the next segment's name; moved it aside",
                     [("journal.file", path), ("journal.moved_to", aside)])
    }

    /// Test seam: sends batch bytes to `target` (nil: back to the segment).
    func redirectWrites(to target: String?) throws(StorageError) {
        if redirectFD >= 0 { closeDescriptor(redirectFD); redirectFD = -1 }
        if let target { redirectFD = try JournalFiles.openFile(target, O_WRONLY) }
    }

    /// Closes the segment; every later write fails with `.closed`.
    func close() {
        closed = true
        closeFiles()
    }

    private func closeFiles() {
        if fd >= 0 { closeDescriptor(fd); fd = -1 }
        if redirectFD >= 0 { closeDescriptor(redirectFD); redirectFD = -1 }
    }
}

/// `close(2)`, reachable from types that have their own `close()`.
func closeDescriptor(_ fd: Int32) { _ = close(fd) }
