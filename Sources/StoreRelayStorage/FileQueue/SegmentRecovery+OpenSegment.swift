#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Repairing the segment a previous run left open.
extension SegmentRecovery {
    /// Cuts the bytes after the last newline (a line whose write or sync never completed,
    /// so never reported delivered), syncs, and renames the segment to its closed name.
    /// A segment left with no whole line is removed. Returns whether a closed segment now
    /// exists. Anything but a regular file (a symlink to a device) is left alone.
    mutating func closeOpenSegment(_ sequence: UInt64) throws(StorageError) -> Bool {
        let name = QueueSegmentName(sequence, .open)
        let path = name.path(in: directory)
        guard QueueFiles.isRegularFile(path) else {
            logger.warning("file queue left an open segment that is not a regular file", [("filequeue.segment", path)])
            return false
        }
        let fd = try QueueFiles.openFile(path, O_RDWR)
        defer { close(fd) }
        let size = try QueueFiles.status(fd, path: path).size
        let keep = try lastLineEnd(fd, size: size, path: path)
        if keep < size {
            try QueueFiles.truncate(fd, to: keep, path: path)
            result.discardedBytes += size - keep
            logger.warning("file queue cut a partial last line from an open segment",
                           [("filequeue.segment", path), ("filequeue.bytes", String(size - keep))])
        }
        if keep == 0 {
            try QueueFiles.removeFile(path)
            result.removedFiles.append(name.fileName)
            return false
        }
        try QueueFiles.syncFile(fd, path: path)
        try QueueFiles.renameFile(path, QueueSegmentName(sequence, .closed).path(in: directory))
        result.closedSegments.append(sequence)
        logger.info("file queue closed the segment left open by the previous run", [("filequeue.segment", path)])
        return true
    }

    /// The offset just past the last newline, reading backwards in chunks; 0 if none.
    private func lastLineEnd(_ fd: Int32, size: Int, path: String) throws(StorageError) -> Int {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        var end = size
        while end > 0 {
            let start = max(0, end - buffer.count)
            let count = try buffer.withMutableBytes { (raw) throws(StorageError) in
                try QueueFiles.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<(end - start)]), at: start, path: path)
            }
            if let index = buffer[0..<count].lastIndex(of: UInt8(ascii: "\n")) { return start + index + 1 }
            end = start
        }
        return 0
    }
}
