/// A record decoded from segment bytes, before it is given a public shape.
struct DecodedRecord: Sendable {
    var kind: UInt8
    var firstSeen: Int64
    var id: String
    var body: [UInt8]
    /// Offset of the frame in its segment.
    var offset: Int
    /// Frame size: header plus payload.
    var length: Int
}

/// Why the bytes at some offset are not a record.
enum FrameProblem: String, Error, Sendable {
    case shortHeader = "short length header"
    case badLength = "implausible length"
    case shortPayload = "short payload"
    case badChecksum = "checksum mismatch"
    case badPayload = "malformed payload"
}

/// The result of scanning one segment's bytes: pure data, no I/O.
struct SegmentScan: Sendable {
    enum HeaderProblem: Sendable, Equatable {
        case short, badMagic, unsupportedVersion(UInt32), wrongSequence(UInt64)
    }
    /// Damaged bytes: from `offset` up to the next good record (`resumeAt`), or to the end.
    struct Damage: Sendable, Equatable {
        var offset: Int
        var problem: FrameProblem
        var resumeAt: Int?
    }

    var headerProblem: HeaderProblem?
    /// Good records before the first damage: the file can be truncated to `goodLength`.
    var records: [DecodedRecord] = []
    var goodLength: Int = 0
    /// Every damaged span, first one first.
    var damages: [Damage] = []
    /// Good records found after damage; they survive only if written again elsewhere.
    var salvaged: [DecodedRecord] = []
}

/// Decodes journal segments. Pure functions over bytes, so every torn and corrupt shape can
/// be tested without files.
enum SegmentScanner {
    /// - Parameter eventBodies: false leaves the payload of event records found before any
    ///   damage empty (recovery reads them back by position, and need not copy them).
    static func scan(_ bytes: [UInt8], sequence: UInt64, maxPayloadBytes: Int, eventBodies: Bool = true) -> SegmentScan {
        bytes.withUnsafeBytes { scan($0, sequence: sequence, maxPayloadBytes: maxPayloadBytes, eventBodies: eventBodies) }
    }

    static func scan(_ bytes: UnsafeRawBufferPointer, sequence: UInt64, maxPayloadBytes: Int, eventBodies: Bool = true) -> SegmentScan {
        var result = SegmentScan()
        if let problem = headerProblem(bytes, sequence: sequence) {
            result.headerProblem = problem
            return result
        }
        let maxPayload = maxPayloadBytes + RecordFrame.payloadPrefixSize + RecordFrame.maxIDBytes
        var offset = RecordFrame.segmentHeaderSize
        result.goodLength = offset
        while offset < bytes.count {
            // After damage every record is salvaged whole, to be written again.
            switch decodeFrame(bytes, at: offset, maxPayload: maxPayload, eventBodies: eventBodies || !result.damages.isEmpty) {
            case .success(let record):
                if result.damages.isEmpty {
                    result.records.append(record)
                    result.goodLength = offset + record.length
                } else {
                    result.salvaged.append(record)
                }
                offset += record.length
            case .failure(let problem):
                let resume = resynchronize(bytes, after: offset, maxPayload: maxPayload)
                result.damages.append(.init(offset: offset, problem: problem, resumeAt: resume))
                offset = resume ?? bytes.count
            }
        }
        return result
    }

    static func headerProblem(_ bytes: UnsafeRawBufferPointer, sequence: UInt64) -> SegmentScan.HeaderProblem? {
        guard bytes.count >= RecordFrame.segmentHeaderSize else { return .short }
        guard Array(bytes[0..<4]) == RecordFrame.magic else { return .badMagic }
        let version: UInt32 = bytes.littleEndian(at: 4)
        guard version == RecordFrame.formatVersion else { return .unsupportedVersion(version) }
        let recorded: UInt64 = bytes.littleEndian(at: 8)
        guard recorded == sequence else { return .wrongSequence(recorded) }
        return nil
    }

    /// Decodes the frame at `offset`. `strict` (used while resynchronizing inside garbage)
    /// also requires a known record kind, to make a false match even less likely.
    static func decodeFrame(_ bytes: UnsafeRawBufferPointer, at offset: Int, maxPayload: Int,
                            strict: Bool = false, eventBodies: Bool = true) -> Result<DecodedRecord, FrameProblem> {
        let remaining = bytes.count - offset
        guard remaining >= RecordFrame.frameHeaderSize else { return .failure(.shortHeader) }
        let length = Int(bytes.littleEndian(at: offset, as: UInt32.self))
        guard length >= RecordFrame.payloadPrefixSize, length <= maxPayload else { return .failure(.badLength) }
        guard remaining - RecordFrame.frameHeaderSize >= length else { return .failure(.shortPayload) }
        let start = offset + RecordFrame.frameHeaderSize
        let kind = bytes[start]
        let idLength = Int(bytes.littleEndian(at: start + 9, as: UInt16.self))
        let plausible = kind != 0 && idLength > 0 && idLength <= RecordFrame.maxIDBytes
            && RecordFrame.payloadPrefixSize + idLength <= length
        if strict && !(plausible && JournalRecordKind.known.contains(kind)) { return .failure(.badPayload) }
        let payload = UnsafeRawBufferPointer(rebasing: bytes[start..<(start + length)])
        let expected: UInt32 = bytes.littleEndian(at: offset + 4)
        guard RecordFrame.checksum(payload) == expected else { return .failure(.badChecksum) }
        guard plausible else { return .failure(.badPayload) }
        let idStart = start + RecordFrame.payloadPrefixSize
        guard let id = String(validating: bytes[idStart..<(idStart + idLength)], as: UTF8.self) else {
            return .failure(.badPayload)
        }
        let record = DecodedRecord(
            kind: kind,
            firstSeen: Int64(bitPattern: bytes.littleEndian(at: start + 1, as: UInt64.self)),
            id: id,
            body: !eventBodies && kind == JournalRecordKind.event.rawValue ? [] : Array(bytes[(idStart + idLength)..<(start + length)]),
            offset: offset,
            length: RecordFrame.frameHeaderSize + length
        )
        return .success(record)
    }

    /// The first offset after `offset` where a whole, checksummed event record starts, if any:
    /// good records after damage mean the damage is in the middle, not a torn tail.
    static func resynchronize(_ bytes: UnsafeRawBufferPointer, after offset: Int, maxPayload: Int) -> Int? {
        let last = bytes.count - RecordFrame.frameHeaderSize - RecordFrame.payloadPrefixSize
        guard offset + 1 <= last else { return nil }
        for candidate in (offset + 1)...last {
            if case .success = decodeFrame(bytes, at: candidate, maxPayload: maxPayload, strict: true) {
                return candidate
            }
        }
        return nil
    }
}
