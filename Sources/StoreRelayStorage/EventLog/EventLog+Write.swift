#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Appending, updating in place and sealing; on `queue` only.
extension EventLog {
    func path(_ file: String) -> String { directory + "/" + file }

    func append(_ summary: EventSummary) throws(StorageError) {
        guard let record = EventLogRecord.encode(summary) else {
            logger.warning("event not added to the event log: a field is too long", [("event.id", summary.id)])
            return
        }
        let bucket = bucket(of: summary.receivedAt.milliseconds)
        if let open = state.open,
           (open.bucket.map { bucket > $0 } ?? false) || open.offsets.count >= options.maxRecordsPerSegment {
            try seal()
        }
        if state.open == nil { try startSegment() }
        // A resubmitted event (a restart's replay of the journal tail) keeps its first record.
        if try !locateOpen(summary.id).isEmpty { return }
        state.open!.bucket = state.open!.bucket ?? bucket
        state.open!.index(summary, at: state.open!.size + state.buffer.count)
        state.buffer.append(contentsOf: record)
    }

    /// Sets the state byte of `destination` in the newest record of event `id`, wherever it
    /// is (not yet written, the open segment, or a sealed one).
    func update(_ id: String, destination: String, to newState: EventSummary.State, receivedAt: Timestamp?) throws(StorageError) {
        for (offset, summary) in try locateOpen(id) {
            guard let index = summary.deliveries.firstIndex(where: { $0.destination == destination }) else { continue }
            let at = offset + EventLogRecord.stateOffset(bodyLength: bodyLength(summary), index: index)
            let open = state.open!
            if at >= open.size {
                state.buffer[at - open.size] = newState.rawValue
            } else {
                try JournalFiles.writeAll(open.fd, [newState.rawValue], at: at, path: open.path)
            }
            return
        }
        for segment in state.sealed.reversed() {
            if let at = receivedAt?.milliseconds, at < segment.firstAt || at > segment.lastAt { continue }
            if try updateSealed(segment, id: id, destination: destination, to: newState) { return }
        }
    }

    /// Writes the batch's records after what is on disk and syncs the open segment.
    func flushBuffer() throws(StorageError) {
        guard var open = state.open else { return }
        if !state.buffer.isEmpty {
            do {
                try JournalFiles.writeAll(open.fd, state.buffer, at: open.size, path: open.path)
            } catch {
                // Whatever part reached the file is cut off; the index forgets the batch.
                _ = ftruncate(open.fd, off_t(open.size))
                try reopenAfterFailure()
                throw error
            }
            open.size += state.buffer.count
            state.buffer = []
            state.open = open
        }
        try JournalFiles.syncData(open.fd, path: open.path)
    }

    /// Writes the open segment's index file and starts using it from disk.
    func seal() throws(StorageError) {
        guard let open = state.open else { return }
        try flushBuffer()
        let sealed = open.sealed
        try JournalFiles.replaceFile(path(EventLogFileName.index(open.sequence)),
                                     EventIndexFile.encode(sealed, offsets: open.offsets, table: open.table))
        try JournalFiles.syncDirectory(directory)
        closeDescriptor(open.fd)
        state.open = nil
        if sealed.recordCount > 0 { state.sealed.append(sealed) } else { removeSegment(sealed.sequence) }
    }

    private func startSegment() throws(StorageError) {
        let sequence = state.nextSequence
        let file = path(EventLogFileName.log(sequence))
        let fd = try JournalFiles.openFile(file, O_RDWR | O_CREAT | O_EXCL)
        do {
            try JournalFiles.writeAll(fd, EventLogFileName.segmentHeader(sequence), at: 0, path: file)
            try JournalFiles.syncData(fd, path: file)
            try JournalFiles.syncDirectory(directory)
        } catch {
            closeDescriptor(fd)
            throw error
        }
        state.nextSequence = sequence + 1
        state.open = OpenSegment(sequence: sequence, fd: fd, path: file, size: EventLogFileName.segmentHeaderSize)
    }

    /// The records of the open segment (written or not) whose id is `id`, newest first.
    func locateOpen(_ id: String) throws(StorageError) -> [(offset: Int, summary: EventSummary)] {
        guard let open = state.open else { return [] }
        var found: [(offset: Int, summary: EventSummary)] = []
        for ordinal in open.table.candidates(id).sorted(by: >) {
            let offset = Int(open.offsets[Int(ordinal)])
            if let summary = try openRecord(at: offset), summary.id == id { found.append((offset, summary)) }
        }
        return found
    }

    /// The record at `offset` of the open segment, from the batch buffer or the file.
    func openRecord(at offset: Int) throws(StorageError) -> EventSummary? {
        guard let open = state.open else { return nil }
        if offset >= open.size {
            let start = offset - open.size
            guard start < state.buffer.count else { return nil }
            let decoded = state.buffer.withUnsafeBytes { EventLogRecord.decode(UnsafeRawBufferPointer(rebasing: $0[start...])) }
            if case .record(let summary, _) = decoded { return summary }
            return nil
        }
        return try Self.readRecord(fd: open.fd, at: offset, path: open.path)
    }

    /// Reads and checks the record at `offset` of an open segment file.
    static func readRecord(fd: Int32, at offset: Int, path: String) throws(StorageError) -> EventSummary? {
        var bytes = [UInt8](repeating: 0, count: 1024)
        for _ in 0..<2 {
            let count = try bytes.withMutableBytes { (raw) throws(StorageError) in
                try JournalFiles.read(fd, into: raw, at: offset, path: path)
            }
            let decoded = bytes.withUnsafeBytes { EventLogRecord.decode(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            switch decoded {
            case .record(let summary, _): return summary
            case .corrupt: return nil
            case .incomplete:
                // Longer than the first read: the header says how long (or the file ends).
                guard count == bytes.count else { return nil }
                let length = bytes.withUnsafeBytes { raw in
                    EventLogRecord.headerSize + Int(raw.littleEndian(at: 0, as: UInt32.self)) + Int(raw.littleEndian(at: 4, as: UInt16.self))
                }
                bytes = [UInt8](repeating: 0, count: length)
            }
        }
        return nil
    }

    private func updateSealed(_ segment: SealedSegment, id: String, destination: String,
                              to newState: EventSummary.State) throws(StorageError) -> Bool {
        let indexPath = path(EventLogFileName.index(segment.sequence))
        let logPath = path(EventLogFileName.log(segment.sequence))
        let indexFD = try JournalFiles.openFile(indexPath, O_RDONLY)
        defer { closeDescriptor(indexFD) }
        let ordinals = try EventIndexFile.candidates(id, in: segment, fd: indexFD, path: indexPath)
        guard !ordinals.isEmpty else { return false }
        let logFD = try JournalFiles.openFile(logPath, O_RDWR)
        defer { closeDescriptor(logFD) }
        for ordinal in ordinals.sorted(by: >) where Int(ordinal) < segment.recordCount {
            let offset = Int(try EventIndexFile.offsets(Int(ordinal)..<Int(ordinal) + 1, in: segment, fd: indexFD, path: indexPath)[0])
            guard let summary = try Self.readRecord(fd: logFD, at: offset, path: logPath), summary.id == id,
                  let index = summary.deliveries.firstIndex(where: { $0.destination == destination }) else { continue }
            let at = offset + EventLogRecord.stateOffset(bodyLength: bodyLength(summary), index: index)
            try JournalFiles.writeAll(logFD, [newState.rawValue], at: at, path: logPath)
            try JournalFiles.syncData(logFD, path: logPath)
            return true
        }
        return false
    }

    /// The body length of `summary`'s record (its encoding is deterministic).
    private func bodyLength(_ summary: EventSummary) -> Int {
        (EventLogRecord.encode(summary)?.count ?? 0) - EventLogRecord.headerSize - summary.deliveries.count
    }

    func bucket(of milliseconds: Int64) -> Int64 {
        let span = max(1, options.segmentSpan.wholeMilliseconds)
        return milliseconds >= 0 ? milliseconds / span : (milliseconds - span + 1) / span
    }

    func removeSegment(_ sequence: UInt64) {
        try? JournalFiles.removeFile(path(EventLogFileName.index(sequence)))
        try? JournalFiles.removeFile(path(EventLogFileName.log(sequence)))
    }
}
