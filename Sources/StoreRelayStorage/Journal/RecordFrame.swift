internal import CZlib

/// The byte layout of journal segments, in one place.
///
/// A segment starts with a 16-byte header: magic `SRJL`, format version (u32 LE) and the
/// segment's own sequence number (u64 LE, so a renamed file is noticed). Records follow, each
/// framed as `[u32 LE payload length][u32 LE CRC-32 of the payload][payload]`, and the payload is
/// `[kind u8][first-seen ms i64 LE][id length u16 LE][id UTF-8][caller bytes]`. The length and
/// checksum let recovery find exactly where a torn or damaged write starts.
enum RecordFrame {
    static let magic: [UInt8] = Array("SRJL".utf8)
    static let formatVersion: UInt32 = 1
    static let segmentHeaderSize = 16
    static let frameHeaderSize = 8
    /// kind + first-seen + id length.
    static let payloadPrefixSize = 11
    /// Event ids are UUIDs or hashes; anything this long is a caller bug, not an id.
    static let maxIDBytes = 1024

    static func segmentHeader(sequence: UInt64) -> [UInt8] {
        var out = magic
        out.appendLittleEndian(formatVersion)
        out.appendLittleEndian(sequence)
        return out
    }

    /// CRC-32 as zlib computes it (the same polynomial as gzip and PNG).
    static func checksum(_ bytes: UnsafeRawBufferPointer, continuing previous: UInt32 = 0) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return previous }
        return UInt32(crc32(uLong(previous), base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
    }

    /// Appends one framed record to `out`.
    static func encode(kind: UInt8, firstSeen: Int64, id: [UInt8], body: [UInt8], into out: inout [UInt8]) {
        let payloadLength = payloadPrefixSize + id.count + body.count
        out.appendLittleEndian(UInt32(payloadLength))
        let checksumAt = out.count
        out.appendLittleEndian(UInt32(0))
        let payloadStart = out.count
        out.append(kind)
        out.appendLittleEndian(UInt64(bitPattern: firstSeen))
        out.appendLittleEndian(UInt16(id.count))
        out.append(contentsOf: id)
        out.append(contentsOf: body)
        let crc = out.withUnsafeBytes { checksum(UnsafeRawBufferPointer(rebasing: $0[payloadStart...])) }
        out.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: checksumAt, as: UInt32.self) }
    }
}

extension Array where Element == UInt8 {
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

extension UnsafeRawBufferPointer {
    /// Reads a little-endian integer at `offset`; the caller has checked the bounds.
    func littleEndian<T: FixedWidthInteger>(at offset: Int, as type: T.Type = T.self) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
