import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Journal {
    /// Reads back the record stored at `position` (an `.stored` answer, or a recovered
    /// record's position), checksum checked.
    ///
    /// This is how work that waits for a long time, such as a delivery backlog, leaves the
    /// record's bytes in the journal instead of in memory. A position stays readable until
    /// its segment is retired. The read is blocking (`pread`), so call it on a queue that may
    /// block, never on the accepting pool.
    ///
    /// - Throws: `.io` when the segment cannot be opened or read (retired, say), and
    ///   `.corruptSegment` when the bytes at `position` are not a whole, checksummed record.
    public func record(at position: RecordPosition) throws(StorageError) -> JournalRecord {
        let path = SegmentName.path(position.segment, in: directory)
        let fd = try JournalFiles.openFile(path, O_RDONLY)
        defer { closeDescriptor(fd) }
        let maxPayload = options.maxPayloadBytes + RecordFrame.payloadPrefixSize + RecordFrame.maxIDBytes
        var header = [UInt8](repeating: 0, count: RecordFrame.frameHeaderSize)
        let headerRead = try header.withMutableBytes { (buffer) throws(StorageError) in
            try JournalFiles.read(fd, into: buffer, at: position.offset, path: path)
        }
        let length = headerRead == header.count
            ? Int(header.withUnsafeBytes { $0.littleEndian(at: 0, as: UInt32.self) }) : -1
        guard length >= RecordFrame.payloadPrefixSize, length <= maxPayload else {
            throw Self.notARecord(at: position, path: path, FrameProblem.badLength)
        }
        var frame = [UInt8](repeating: 0, count: RecordFrame.frameHeaderSize + length)
        let frameRead = try frame.withMutableBytes { (buffer) throws(StorageError) in
            try JournalFiles.read(fd, into: buffer, at: position.offset, path: path)
        }
        guard frameRead == frame.count else { throw Self.notARecord(at: position, path: path, .shortPayload) }
        let decoded = frame.withUnsafeBytes { SegmentScanner.decodeFrame($0, at: 0, maxPayload: maxPayload) }
        switch decoded {
        case .success(let record):
            return JournalRecord(kind: JournalRecordKind(rawValue: record.kind), id: record.id,
                                 firstSeen: Timestamp(milliseconds: record.firstSeen), payload: record.body,
                                 position: position, end: RecordPosition(segment: position.segment, offset: position.offset + record.length))
        case .failure(let problem):
            throw Self.notARecord(at: position, path: path, problem)
        }
    }

    /// Just after the record an append of `id` with `payloadBytes` bytes stored at
    /// `position`: where a consumer that took it reads on from.
    public static func end(ofRecordAt position: RecordPosition, id: String, payloadBytes: Int) -> RecordPosition {
        RecordPosition(segment: position.segment,
                       offset: position.offset + RecordFrame.frameHeaderSize + RecordFrame.payloadPrefixSize + id.utf8.count + payloadBytes)
    }

    private static func notARecord(at position: RecordPosition, path: String, _ problem: FrameProblem) -> StorageError {
        StorageError(.corruptSegment, path: path, message: "no record at \(position) of \(path): \(problem.rawValue)")
    }
}
