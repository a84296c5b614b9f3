#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelaySupport

/// Creating and closing segments.
extension SegmentWriter {
    /// Creates `<next>.jsonl.open` and makes its name durable. `.sequence` is updated first,
    /// so sequences keep rising even after consumers delete every segment and we restart.
    /// The sequence is used up even if creation fails, so a half-made name is never reused.
    func createSegment() throws(FileQueueError) {
        let sequence = lastSequence + 1
        lastSequence = sequence
        let path = SegmentName(sequence, .open).path(in: directory)
        try FileIO.replaceFile(directory + "/" + SegmentName.sequenceFile, Array("\(sequence)\n".utf8))
        // No O_EXCL: the name is new by construction (recovery saw every sequence), and a
        // test may place a symlink to /dev/full here to get real ENOSPC from real writes.
        let fd = try FileIO.openFile(path, O_WRONLY | O_CREAT)
        do throws(FileQueueError) {
            let status = try FileIO.status(fd, path: path)
            if status.isRegular && status.size > 0 { throw FileQueueError(SystemCallFailure("open", path: path, errno: EEXIST)) }
            try FileIO.syncDirectory(directory)
        } catch {
            close(fd)
            if error.errno != EEXIST { try? FileIO.removeFile(path) }
            throw error
        }
        current = OpenSegment(sequence: sequence, fd: fd, length: 0, openedAt: options.clock.now())
        logger.debug("file queue segment opened", [("filequeue.segment", path)])
    }

    /// Closes the open segment: fsync, rename `<seq>.jsonl.open` to `<seq>.jsonl`, fsync the
    /// directory, then hand it to `onClosed`. An empty segment is removed instead of being
    /// published. On failure before the rename the segment stays open and usable.
    func seal() throws(FileQueueError) {
        guard let segment = current else { return }
        let openPath = SegmentName(segment.sequence, .open).path(in: directory)
        if segment.length == 0 {
            close(segment.fd)
            current = nil
            try FileIO.removeFile(openPath)
            try FileIO.syncDirectory(directory)
            return
        }
        let closedPath = SegmentName(segment.sequence, .closed).path(in: directory)
        try FileIO.syncFile(segment.fd, path: openPath)
        try FileIO.renameFile(openPath, closedPath)
        close(segment.fd)
        current = nil
        report.closedSegments.append(segment.sequence)
        // Compress even if the directory sync below fails: the file has its closed name.
        defer { onClosed(segment.sequence) }
        try FileIO.syncDirectory(directory)
        logger.debug("file queue segment closed", [("filequeue.segment", closedPath),
                                                   ("filequeue.bytes", String(segment.length))])
    }
}
