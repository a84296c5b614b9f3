/// What a `PendingRecordLog` file holds: a put or a removal.
enum PendingLogRecord: Sendable, Equatable {
    case put(PendingRecord)
    case remove(String)
}

/// The byte layout of a `PendingRecordLog` file, in one place.
///
/// An 8-byte header: magic `SRPL` and format version (u32 LE). Records follow, framed as the
/// journal's are — `[u32 LE payload length][u32 LE CRC-32 of the payload][payload]` — and the
/// payload is `[kind u8: 1 put, 2 remove][id length u16 LE][id UTF-8][bytes (puts only)]`.
/// The length and checksum show exactly where a torn append starts.
enum PendingLogFormat {
    static let magic: [UInt8] = Array("SRPL".utf8)
    static let formatVersion: UInt32 = 1
    static let header: [UInt8] = {
        var out = magic
        out.appendLittleEndian(formatVersion)
        return out
    }()
    static let frameHeaderSize = 8
    static let payloadPrefixSize = 3
    /// A frame longer than this is damage, not a record: nobody puts 64 MiB aside.
    static let maxPayloadBytes = 64 << 20

    static func fits(_ record: PendingRecord) -> Bool {
        let id = record.id.utf8.count
        return id > 0 && id <= RecordFrame.maxIDBytes && payloadPrefixSize + id + record.bytes.count <= maxPayloadBytes
    }

    static func encodedSize(of record: PendingRecord) -> Int {
        frameHeaderSize + payloadPrefixSize + record.id.utf8.count + record.bytes.count
    }

    static func encode(_ record: PendingLogRecord, into out: inout [UInt8]) {
        let (kind, id, bytes): (UInt8, String, [UInt8]) = switch record {
        case .put(let put): (1, put.id, put.bytes)
        case .remove(let id): (2, id, [])
        }
        let idBytes = Array(id.utf8)
        out.appendLittleEndian(UInt32(payloadPrefixSize + idBytes.count + bytes.count))
        let checksumAt = out.count
        out.appendLittleEndian(UInt32(0))
        let payloadStart = out.count
        out.append(kind)
        out.appendLittleEndian(UInt16(idBytes.count))
        out.append(contentsOf: idBytes)
        out.append(contentsOf: bytes)
        let crc = out.withUnsafeBytes { RecordFrame.checksum(UnsafeRawBufferPointer(rebasing: $0[payloadStart...])) }
        out.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: checksumAt, as: UInt32.self) }
    }

    /// What a scan of a whole file found: whether the header is this format's, the records in
    /// order, and where the last whole, valid one ends (the file's length when nothing is torn
    /// or damaged).
    struct Scan {
        var validHeader: Bool
        var records: [PendingLogRecord]
        var end: Int
        /// What follows `end` is a whole frame that fails its checksum or does not parse
        /// (damage), rather than one cut short (a torn append).
        var damaged = false
    }

    static func scan(_ file: ArraySlice<UInt8>) -> Scan {
        let bytes = Array(file)
        guard bytes.starts(with: header) else { return Scan(validHeader: false, records: [], end: 0) }
        var records: [PendingLogRecord] = []
        var offset = header.count
        let damaged = bytes.withUnsafeBytes { raw in
            while let (record, next) = decode(raw, at: offset) {
                records.append(record)
                offset = next
            }
            return isDamaged(raw, at: offset)
        }
        return Scan(validHeader: true, records: records, end: offset, damaged: damaged)
    }

    /// Whether the bytes at `offset` (where decoding stopped) hold more than a torn append:
    /// a frame whose header and declared length are all there.
    private static func isDamaged(_ raw: UnsafeRawBufferPointer, at offset: Int) -> Bool {
        guard raw.count - offset >= frameHeaderSize else { return false }
        let length = Int(raw.littleEndian(at: offset, as: UInt32.self))
        guard length >= payloadPrefixSize, length <= maxPayloadBytes else { return true }
        return raw.count - offset - frameHeaderSize >= length
    }

    /// The record at `offset` and where the next one starts; nil at the end, or where the
    /// frame is torn, fails its checksum or does not parse.
    private static func decode(_ raw: UnsafeRawBufferPointer, at offset: Int) -> (PendingLogRecord, Int)? {
        guard raw.count - offset >= frameHeaderSize else { return nil }
        let length = Int(raw.littleEndian(at: offset, as: UInt32.self))
        let checksum: UInt32 = raw.littleEndian(at: offset + 4)
        let start = offset + frameHeaderSize
        guard length >= payloadPrefixSize, length <= maxPayloadBytes, raw.count - start >= length else { return nil }
        let payload = UnsafeRawBufferPointer(rebasing: raw[start..<start + length])
        guard RecordFrame.checksum(payload) == checksum else { return nil }
        let kind = payload[0]
        let idLength = Int(payload.littleEndian(at: 1, as: UInt16.self))
        guard idLength > 0, payloadPrefixSize + idLength <= length,
              let id = String(validating: payload[payloadPrefixSize..<payloadPrefixSize + idLength], as: UTF8.self)
        else { return nil }
        let rest = Array(payload[(payloadPrefixSize + idLength)...])
        switch kind {
        case 1: return (.put(PendingRecord(id: id, bytes: rest)), start + length)
        case 2 where rest.isEmpty: return (.remove(id), start + length)
        default: return nil
        }
    }
}
