#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// What the writer did for one request, folded into the queue's counters under its lock.
struct WriteReport: Sendable {
    /// How many lines, from the front of the batch, are written and synced.
    var delivered = 0
    /// Why the remaining lines were not; nil when all were.
    var error: StorageError?
    var syncs = 0
    var bytes = 0
    /// Segments renamed to their closed name during this request.
    var closedSegments: [UInt64] = []
    /// The segment open after the request, if any.
    var openSequence: UInt64?
}

/// Owns the open segment's file descriptor: appends batches (one write, one fdatasync),
/// rotates by size and age, and closes segments. Confined to the queue's writer queue (the
/// owner wraps it in `QueueConfined`), the only place blocking appends happen.
final class QueueSegmentWriter {
    struct OpenSegment {
        var sequence: UInt64
        var fd: Int32
        var length: Int
        var openedAt: Timestamp
    }

    let directory: String
    let options: FileQueueOptions
    let logger: Logger
    /// Called with each segment once it has its closed name (to compress it).
    let onClosed: @Sendable (UInt64) -> Void
    var current: OpenSegment?
    /// The highest sequence ever used in the directory; the next segment is one more.
    var lastSequence: UInt64
    var report = WriteReport()
    /// Test seam (`FileQueue.redirectNextSegmentForTesting`): where new segments really write.
    var writeRedirectForTesting: String?

    init(directory: String, options: FileQueueOptions, logger: Logger, lastSequence: UInt64,
         onClosed: @escaping @Sendable (UInt64) -> Void) {
        self.directory = directory
        self.options = options
        self.logger = logger
        self.lastSequence = lastSequence
        self.onClosed = onClosed
    }

    deinit { if let current { close(current.fd) } }

    /// The open segment's sequence, if one is open.
    var openSequence: UInt64? { current?.sequence }

    /// Appends `lines` (each without its newline) in order. A batch is split at a line
    /// boundary when the next write would take the segment past `rotateSize`.
    func write(_ lines: [[UInt8]]) -> WriteReport {
        var index = 0
        do throws(StorageError) {
            while index < lines.count {
                if current == nil { try createSegment() }
                let used = current!.length
                var chunk: [UInt8] = []
                var end = index
                while end < lines.count {
                    let needed = lines[end].count + 1
                    if used + chunk.count > 0 && used + chunk.count + needed > options.rotateSize { break }
                    chunk.append(contentsOf: lines[end])
                    chunk.append(UInt8(ascii: "\n"))
                    end += 1
                }
                if end == index {
                    try seal()
                    continue
                }
                try append(chunk)
                report.delivered += end - index
                index = end
            }
        } catch {
            report.error = error
        }
        return takeReport()
    }

    /// Closes the open segment if it holds a line and was opened at least `rotateAge` ago.
    func rotateIfOld(now: Timestamp) -> WriteReport {
        if let segment = current, segment.length > 0,
           now.milliseconds - segment.openedAt.milliseconds >= options.rotateAgeMilliseconds {
            do throws(StorageError) { try seal() } catch { report.error = error }
        }
        return takeReport()
    }

    /// Shutdown: closes the open segment (an empty one is removed instead).
    func closeSegment() -> WriteReport {
        do throws(StorageError) { try seal() } catch { report.error = error }
        return takeReport()
    }

    private func takeReport() -> WriteReport {
        defer { report = WriteReport() }
        report.openSequence = current?.sequence
        return report
    }

    private func append(_ chunk: [UInt8]) throws(StorageError) {
        let segment = current!
        let path = QueueSegmentName(segment.sequence, .open).path(in: directory)
        do throws(StorageError) {
            try chunk.withBytes { (raw) throws(StorageError) in
                try QueueFiles.writeAll(segment.fd, raw, at: segment.length, path: path)
            }
            report.syncs += 1
            try QueueFiles.syncData(segment.fd, path: path)
        } catch {
            repair(after: error, goodLength: segment.length)
            throw error
        }
        current!.length += chunk.count
        report.bytes += chunk.count
    }

    /// Removes a failed chunk's bytes so no partial line stays in the segment. After a
    /// failed sync the page cache no longer tells what is on disk, so the segment is closed
    /// at its last confirmed length and the next batch starts a fresh one. If even that
    /// fails, the segment is left `.open` for recovery at the next start.
    private func repair(after error: StorageError, goodLength: Int) {
        guard let segment = current else { return }
        let path = QueueSegmentName(segment.sequence, .open).path(in: directory)
        do throws(StorageError) {
            try QueueFiles.truncate(segment.fd, to: goodLength, path: path)
            try QueueFiles.syncData(segment.fd, path: path)
            if error.operation == "fdatasync" { try seal() }
        } catch {
            if current?.sequence == segment.sequence {
                close(segment.fd)
                current = nil
            }
            logger.error("file queue abandoned a segment after a failed write; it is repaired at the next start",
                         [("filequeue.segment", path), ("error", error.message)])
        }
    }
}
