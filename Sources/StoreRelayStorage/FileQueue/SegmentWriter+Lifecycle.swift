#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Creating and closing segments.
extension QueueSegmentWriter {
    /// Creates `<next>.jsonl.open` and makes its name durable. `.sequence` is updated first,
    /// so sequences keep rising even after consumers delete every segment and we restart.
    /// The sequence is used up even if creation fails, so a half-made name is never reused.
    func createSegment() throws(StorageError) {
        let sequence = lastSequence + 1
        lastSequence = sequence
        let path = QueueSegmentName(sequence, .open).path(in: directory)
        try QueueFiles.replaceFile(directory + "/" + QueueSegmentName.sequenceFile, Array("\(sequence)\n".utf8))
        // O_EXCL: the name is new by construction (recovery saw every sequence), so anything
        // already there was put by someone else (a link to another file, say) and is left
        // alone: the batch fails with EEXIST and the next one takes the next sequence.
        let fd = try QueueFiles.openFile(path, O_WRONLY | O_CREAT | O_EXCL)
        do throws(StorageError) {
            if let target = writeRedirectForTesting { try redirect(fd, to: target) }
            try QueueFiles.syncDirectory(directory)
        } catch {
            close(fd)
            try? QueueFiles.removeFile(path)
            throw error
        }
        current = OpenSegment(sequence: sequence, fd: fd, length: 0, openedAt: options.clock.now())
        logger.debug("file queue segment opened", [("filequeue.segment", path)])
    }

    /// Test seam: the segment's descriptor writes to `target` (for example `/dev/full`, where
    /// every write fails with ENOSPC) through the same system calls; the segment file itself
    /// stays an empty regular file.
    private func redirect(_ fd: Int32, to target: String) throws(StorageError) {
        let other = try QueueFiles.openFile(target, O_WRONLY)
        defer { close(other) }
        guard dup2(other, fd) >= 0 else { throw StorageError(SystemCallFailure("dup2", path: target, errno: errno)) }
    }

    /// Closes the open segment: fsync, rename `<seq>.jsonl.open` to `<seq>.jsonl`, fsync the
    /// directory, then hand it to `onClosed`. An empty segment is removed instead of being
    /// published. On failure before the rename the segment stays open and usable.
    func seal() throws(StorageError) {
        guard let segment = current else { return }
        let openPath = QueueSegmentName(segment.sequence, .open).path(in: directory)
        if segment.length == 0 {
            close(segment.fd)
            current = nil
            try QueueFiles.removeFile(openPath)
            try QueueFiles.syncDirectory(directory)
            return
        }
        let closedPath = QueueSegmentName(segment.sequence, .closed).path(in: directory)
        try QueueFiles.syncFile(segment.fd, path: openPath)
        try QueueFiles.renameFile(openPath, closedPath)
        close(segment.fd)
        current = nil
        report.closedSegments.append(segment.sequence)
        // Compress even if the directory sync below fails: the file has its closed name.
        defer { onClosed(segment.sequence) }
        try QueueFiles.syncDirectory(directory)
        logger.debug("file queue segment closed", [("filequeue.segment", closedPath),
                                                   ("filequeue.bytes", segment.length)])
    }
}
