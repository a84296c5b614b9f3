#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Opening the directory again: indexes trusted when whole, segments scanned otherwise,
/// torn tails cut, and retention. On `queue` only.
extension EventLog {
    func recover() throws(StorageError) -> [String] {
        var notes: [String] = []
        let files = try JournalFiles.listDirectory(directory)
        for file in files where file.hasPrefix(EventLogFileName.prefix) && file.hasSuffix(".tmp") {
            try? JournalFiles.removeFile(path(file))  // an index whose rename never happened
        }
        let logs = files.compactMap { EventLogFileName.sequence(of: $0, ext: ".log") }.sorted()
        let indexes = Set(files.compactMap { EventLogFileName.sequence(of: $0, ext: ".idx") })
        for stray in indexes.subtracting(logs) { try? JournalFiles.removeFile(path(EventLogFileName.index(stray))) }
        for sequence in logs {
            if indexes.contains(sequence), let sealed = try readIndexHeader(sequence) {
                state.sealed.append(sealed)
                continue
            }
            guard let (open, cut) = try scan(sequence) else {
                notes.append("segment \(sequence) has no valid header; removed (the event log is rebuilt from new events only)")
                removeSegment(sequence)
                continue
            }
            if cut > 0 { notes.append("segment \(sequence): cut a torn or damaged tail of \(cut) bytes") }
            state.open = open
            // Only the newest segment stays open; an older one without its index was being
            // sealed when the process stopped.
            if sequence != logs.last {
                notes.append("segment \(sequence): index rebuilt")
                try seal()
            }
        }
        state.nextSequence = (logs.last ?? 0) + 1
        return notes
    }

    /// Reads segment `sequence` whole (an open segment is bounded), indexes every record
    /// that checks out and truncates the file after the last one. Nil when the file is not
    /// a segment; otherwise the segment, open, and how many bytes were cut.
    func scan(_ sequence: UInt64) throws(StorageError) -> (OpenSegment, cut: Int)? {
        let file = path(EventLogFileName.log(sequence))
        let bytes = try JournalFiles.readAll(file)
        guard bytes.count >= EventLogFileName.segmentHeaderSize,
              Array(bytes[0..<EventLogFileName.segmentHeaderSize]) == EventLogFileName.segmentHeader(sequence)
        else { return nil }
        let fd = try JournalFiles.openFile(file, O_RDWR)
        var open = OpenSegment(sequence: sequence, fd: fd, path: file, size: EventLogFileName.segmentHeaderSize)
        var offset = EventLogFileName.segmentHeaderSize
        bytes.withUnsafeBytes { raw in
            while offset < raw.count, case .record(let summary, let length) = EventLogRecord.decode(UnsafeRawBufferPointer(rebasing: raw[offset...])) {
                open.bucket = open.bucket ?? bucket(of: summary.receivedAt.milliseconds)
                open.index(summary, at: offset)
                offset += length
            }
        }
        open.size = offset
        if offset < bytes.count {
            do {
                try JournalFiles.truncate(fd, to: offset, path: file)
                try JournalFiles.syncData(fd, path: file)
            } catch {
                closeDescriptor(fd)
                throw error
            }
        }
        return (open, bytes.count - offset)
    }

    /// After a failed write: the open segment is read again from what its file holds.
    func reopenAfterFailure() throws(StorageError) {
        guard let open = state.open else { return }
        closeDescriptor(open.fd)
        state.open = nil
        state.buffer = []
        if let (reopened, _) = try scan(open.sequence) { state.open = reopened }
    }

    private func readIndexHeader(_ sequence: UInt64) throws(StorageError) -> SealedSegment? {
        let file = path(EventLogFileName.index(sequence))
        let fd = try JournalFiles.openFile(file, O_RDONLY)
        defer { closeDescriptor(fd) }
        let size = try JournalFiles.status(fd, path: file).size
        var header = [UInt8](repeating: 0, count: EventIndexFile.headerSize)
        let count = try header.withMutableBytes { (raw) throws(StorageError) in try JournalFiles.read(fd, into: raw, at: 0, path: file) }
        guard count == header.count else { return nil }
        return EventIndexFile.decodeHeader(header, sequence: sequence, fileSize: size)
    }

    /// Deletes every segment whose newest event is older than the retention.
    func applyRetention() {
        let now = options.clock.now().milliseconds
        state.lastRetention = now
        let cutoff = now - options.retention.wholeMilliseconds
        let expired = state.sealed.filter { $0.lastAt < cutoff }
        guard !expired.isEmpty || (state.open.map { !$0.offsets.isEmpty && $0.lastAt < cutoff } ?? false) else { return }
        state.sealed.removeAll { $0.lastAt < cutoff }
        for segment in expired { removeSegment(segment.sequence) }
        if let open = state.open, !open.offsets.isEmpty, open.lastAt < cutoff {
            closeDescriptor(open.fd)
            state.open = nil
            state.buffer = []
            removeSegment(open.sequence)
        }
        try? JournalFiles.syncDirectory(directory)
    }
}
