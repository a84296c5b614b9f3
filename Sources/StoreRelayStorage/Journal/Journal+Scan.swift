#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Records read in journal order from some position: what a consumer with a cursor (a
/// destination catching up on its backlog) reads next.
public struct JournalChunk: Sendable {
    public var records: [JournalRecord]
    /// Where the next read starts.
    public var next: RecordPosition
    /// `next` is the end of what is durable now: nothing more to read until the next append.
    public var atEnd: Bool
}

extension Journal {
    /// The position of the first record the journal holds (or of the first it will hold).
    public var startPosition: RecordPosition {
        state.withLock { s in
            RecordPosition(segment: s.segments.min() ?? s.end.segment, offset: 0)
        }
    }

    /// Just after the last durable record: everything before it can be read.
    public var endPosition: RecordPosition { state.withLock { $0.end } }

    /// Reads whole records from `position` on, about `budget` bytes of them (at least one
    /// record), never past the last durable batch. A position in a segment retired since
    /// continues at the next segment. Damage in a segment (a record failing its checksum) is
    /// logged and skipped to the next good record: those bytes cannot be delivered.
    ///
    /// With `only`, records of other kinds are stepped over by their length, neither checked
    /// nor copied: a start that replays progress records does not checksum a second of events.
    ///
    /// Blocking (`pread`): call it on a queue that may block, never on the accepting pool.
    public func records(from position: RecordPosition, budget: Int = 1 << 20,
                        only kind: JournalRecordKind? = nil) throws(StorageError) -> JournalChunk {
        var position = position
        while true {
            let (end, segments) = state.withLock { s in (s.end, s.segments) }
            guard position < end else { return JournalChunk(records: [], next: position, atEnd: true) }
            guard segments.contains(position.segment) else {
                guard let next = segments.filter({ $0 > position.segment }).min() else {
                    return JournalChunk(records: [], next: position, atEnd: true)
                }
                position = RecordPosition(segment: next, offset: 0)
                continue
            }
            let path = SegmentName.path(position.segment, in: directory)
            let fd: Int32
            do throws(StorageError) {
                fd = try JournalFiles.openFile(path, O_RDONLY)
            } catch where error.errno == ENOENT && !self.segments.contains(position.segment) {
                // Retired while we looked: what follows is in the next segment. (A segment
                // that vanished while the journal still holds it is an error, thrown.)
                position = nextSegment(after: position.segment, in: segments)
                continue
            }
            defer { closeDescriptor(fd) }
            let limit = position.segment == end.segment ? end.offset : try JournalFiles.status(fd, path: path).size
            if position.offset < RecordFrame.segmentHeaderSize {
                var header = [UInt8](repeating: 0, count: RecordFrame.segmentHeaderSize)
                let count = try header.withMutableBytes { (buffer) throws(StorageError) in
                    try JournalFiles.read(fd, into: buffer, at: 0, path: path)
                }
                let problem = header.withUnsafeBytes { SegmentScanner.headerProblem(UnsafeRawBufferPointer(rebasing: $0[0..<count]), sequence: position.segment) }
                if let problem {
                    logger.error("journal segment has an unreadable header; its records are skipped",
                                 [("journal.segment", path), ("reason", "\(problem)")])
                    position = nextSegment(after: position.segment, in: segments)
                    continue
                }
                position = RecordPosition(segment: position.segment, offset: RecordFrame.segmentHeaderSize)
            }
            guard position.offset < limit else {
                position = nextSegment(after: position.segment, in: segments)
                continue
            }
            let chunk = try readChunk(fd, path: path, from: position, limit: limit, budget: budget, only: kind)
            if chunk.records.isEmpty && chunk.next > position && kind != nil {
                // Only records of other kinds so far: go on reading.
                position = chunk.next
                continue
            }
            if chunk.records.isEmpty {
                // Only damage up to the limit: carry on after it.
                position = chunk.next > position ? chunk.next : nextSegment(after: position.segment, in: segments)
                continue
            }
            var result = chunk
            result.atEnd = chunk.next >= end
            return result
        }
    }

    /// Reads the records from `position` on, in order, handing each to `body` until it
    /// answers false (the record it was handed counts as read) or what is durable now is all
    /// read. Returns where a next read would start, and whether that is the end. `only` and
    /// `budget` are as for `records(from:)`; blocking like it.
    @discardableResult
    public func forEachRecord(from position: RecordPosition, budget: Int = 1 << 20, only kind: JournalRecordKind? = nil,
                              _ body: (JournalRecord) -> Bool) throws(StorageError) -> (next: RecordPosition, atEnd: Bool) {
        var position = position
        while true {
            let chunk = try records(from: position, budget: budget, only: kind)
            for record in chunk.records where !body(record) {
                return (record.end, false)
            }
            position = chunk.next
            if chunk.atEnd || chunk.records.isEmpty { return (position, chunk.atEnd) }
        }
    }

    /// The start of the first segment after `segment`, or a position past every segment.
    private func nextSegment(after segment: UInt64, in segments: Set<UInt64>) -> RecordPosition {
        if let next = segments.filter({ $0 > segment }).min() { return RecordPosition(segment: next, offset: 0) }
        return RecordPosition(segment: segment + 1, offset: 0)
    }

    /// The records of one segment between `position` and `limit`, about `budget` bytes.
    private func readChunk(_ fd: Int32, path: String, from position: RecordPosition, limit: Int,
                           budget: Int, only kind: JournalRecordKind?) throws(StorageError) -> JournalChunk {
        let maxPayload = options.maxPayloadBytes + RecordFrame.payloadPrefixSize + RecordFrame.maxIDBytes
        var length = min(limit - position.offset, max(budget, 64 * 1024))
        while true {
            var bytes = [UInt8](repeating: 0, count: length)
            let count = try bytes.withMutableBytes { (buffer) throws(StorageError) in
                try JournalFiles.read(fd, into: buffer, at: position.offset, path: path)
            }
            var records: [JournalRecord] = []
            var offset = 0
            var problem: FrameProblem?
            bytes.withUnsafeBytes { raw in
                let buffer = UnsafeRawBufferPointer(rebasing: raw[0..<count])
                while offset < count {
                    if let kind, let skipped = Self.frameLength(buffer, at: offset, maxPayload: maxPayload, unless: kind) {
                        offset += skipped
                        continue
                    }
                    switch SegmentScanner.decodeFrame(buffer, at: offset, maxPayload: maxPayload) {
                    case .success(let record):
                        records.append(JournalRecord(
                            kind: JournalRecordKind(rawValue: record.kind), id: record.id,
                            firstSeen: Timestamp(milliseconds: record.firstSeen), payload: record.body,
                            position: RecordPosition(segment: position.segment, offset: position.offset + offset),
                            end: RecordPosition(segment: position.segment, offset: position.offset + offset + record.length)))
                        offset += record.length
                    case .failure(let failure):
                        problem = failure
                        return
                    }
                }
            }
            let reachedLimit = position.offset + count >= limit
            switch problem {
            case nil:
                return JournalChunk(records: records, next: RecordPosition(segment: position.segment, offset: position.offset + offset),
                                    atEnd: false)
            case .shortHeader? where !reachedLimit, .shortPayload? where !reachedLimit:
                if !records.isEmpty {
                    return JournalChunk(records: records, next: RecordPosition(segment: position.segment, offset: position.offset + offset),
                                        atEnd: false)
                }
                // One record larger than the chunk: read exactly as much as it needs.
                let needed = bytes.withUnsafeBytes { raw -> Int in
                    guard count >= RecordFrame.frameHeaderSize else { return RecordFrame.frameHeaderSize }
                    return RecordFrame.frameHeaderSize + Int(raw.littleEndian(at: 0, as: UInt32.self))
                }
                length = min(limit - position.offset, max(needed, length + 1))
            case let failure?:
                let damageAt = position.offset + offset
                let resume = try resynchronize(fd, path: path, after: damageAt, limit: limit, maxPayload: maxPayload)
                logger.error("journal segment is damaged; the records in the damaged bytes cannot be delivered", [
                    ("journal.segment", path), ("journal.offset", damageAt),
                    ("journal.bytes", String((resume ?? limit) - damageAt)), ("reason", failure.rawValue),
                ])
                let next = resume.map { RecordPosition(segment: position.segment, offset: $0) }
                    ?? RecordPosition(segment: position.segment, offset: limit)
                return JournalChunk(records: records, next: next, atEnd: false)
            }
        }
    }

    /// The length of the whole frame at `offset` when it is in `buffer` and of another kind
    /// than `kind`; nil when it must be decoded (its kind, or too short or implausible to tell).
    private static func frameLength(_ buffer: UnsafeRawBufferPointer, at offset: Int, maxPayload: Int,
                                    unless kind: JournalRecordKind) -> Int? {
        guard buffer.count - offset >= RecordFrame.frameHeaderSize + 1 else { return nil }
        let length = Int(buffer.littleEndian(at: offset, as: UInt32.self))
        guard length >= RecordFrame.payloadPrefixSize, length <= maxPayload,
              buffer.count - offset >= RecordFrame.frameHeaderSize + length,
              buffer[offset + RecordFrame.frameHeaderSize] != kind.rawValue else { return nil }
        return RecordFrame.frameHeaderSize + length
    }

    /// The offset of the next good record after damage at `offset`, reading the rest of the
    /// segment (damage is rare; a segment is at most a few tens of MiB).
    private func resynchronize(_ fd: Int32, path: String, after offset: Int, limit: Int,
                               maxPayload: Int) throws(StorageError) -> Int? {
        var rest = [UInt8](repeating: 0, count: max(0, limit - offset))
        let count = try rest.withMutableBytes { (buffer) throws(StorageError) in
            try JournalFiles.read(fd, into: buffer, at: offset, path: path)
        }
        let found = rest.withUnsafeBytes { raw in
            SegmentScanner.resynchronize(UnsafeRawBufferPointer(rebasing: raw[0..<count]), after: 0, maxPayload: maxPayload)
        }
        return found.map { offset + $0 }
    }
}
