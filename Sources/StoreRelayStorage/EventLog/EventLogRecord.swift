import StoreRelayCore

/// The byte layout of one event-log record, encoded and decoded without I/O.
///
/// `[u32 LE body length][u16 LE state count][u16 LE marker 0x4C45][u32 LE CRC-32][body][states]`:
/// the CRC covers the first eight bytes and the body; the states (one byte per destination,
/// `EventSummary.State`) follow it uncovered, because they are the only bytes ever rewritten
/// in place, one at a time, and a single-byte `pwrite` cannot tear. An unknown state byte
/// reads as pending rather than failing the record.
///
/// The body: `[u8 version 1][i64 LE receivedAt ms]`, then id, type, subtype, environment,
/// bundleId, originalTransactionId, transactionId as strings (`[u16 LE length][UTF-8]`,
/// length 0xFFFF for absent), then `[u16 LE count]` destination names as strings.
enum EventLogRecord {
    static let headerSize = 12
    static let marker: UInt16 = 0x4C45
    static let version: UInt8 = 1
    /// Far beyond any real summary (ids are short); a length above it is damage, not a record.
    static let maxBodyBytes = 16 * 1024
    static let maxDestinations = 256
    private static let absent: UInt16 = 0xFFFF

    /// What `decode` found at an offset.
    enum Decoded: Equatable {
        /// A whole record, `length` bytes long with its states.
        case record(EventSummary, length: Int)
        /// The bytes end inside a record: a torn tail, or a record still being read.
        case incomplete
        /// Not a record: a bad marker, length or checksum.
        case corrupt
    }

    /// The record of `summary`, or nil when it cannot be one (a field over 65,534 bytes,
    /// too many destinations, a body over `maxBodyBytes`).
    static func encode(_ summary: EventSummary) -> [UInt8]? {
        guard summary.deliveries.count <= maxDestinations else { return nil }
        var body: [UInt8] = [version]
        body.appendLittleEndian(summary.receivedAt.milliseconds)
        let fields = [summary.id, summary.type, summary.subtype, summary.environment, summary.bundleId,
                      summary.originalTransactionId, summary.transactionId]
        for field in fields {
            guard append(field, to: &body) else { return nil }
        }
        body.appendLittleEndian(UInt16(summary.deliveries.count))
        for delivery in summary.deliveries {
            guard append(delivery.destination, to: &body) else { return nil }
        }
        guard body.count <= maxBodyBytes else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(headerSize + body.count + summary.deliveries.count)
        out.appendLittleEndian(UInt32(body.count))
        out.appendLittleEndian(UInt16(summary.deliveries.count))
        out.appendLittleEndian(marker)
        let crc = body.withUnsafeBytes { checksum(header: out, body: $0) }
        out.appendLittleEndian(crc)
        out.append(contentsOf: body)
        out.append(contentsOf: summary.deliveries.map(\.state.rawValue))
        return out
    }

    /// The record at the start of `bytes`.
    static func decode(_ bytes: UnsafeRawBufferPointer) -> Decoded {
        guard bytes.count >= headerSize else { return .incomplete }
        let bodyLength = Int(bytes.littleEndian(at: 0, as: UInt32.self))
        let stateCount = Int(bytes.littleEndian(at: 4, as: UInt16.self))
        guard bytes.littleEndian(at: 6, as: UInt16.self) == marker, bodyLength <= maxBodyBytes, stateCount <= maxDestinations
        else { return .corrupt }
        let length = headerSize + bodyLength + stateCount
        guard bytes.count >= length else { return .incomplete }
        let header = Array(UnsafeRawBufferPointer(rebasing: bytes[0..<8]))
        let body = UnsafeRawBufferPointer(rebasing: bytes[headerSize..<(headerSize + bodyLength)])
        guard checksum(header: header, body: body) == bytes.littleEndian(at: 8, as: UInt32.self),
              var summary = decodeBody(body), summary.deliveries.count == stateCount
        else { return .corrupt }
        for index in 0..<stateCount {
            summary.deliveries[index].state = State(rawValue: bytes[headerSize + bodyLength + index]) ?? .pending
        }
        return .record(summary, length: length)
    }

    /// Where the state byte of delivery `index` is, from the record's start.
    static func stateOffset(bodyLength: Int, index: Int) -> Int { headerSize + bodyLength + index }

    private typealias State = EventSummary.State

    private static func decodeBody(_ body: UnsafeRawBufferPointer) -> EventSummary? {
        var reader = BodyReader(bytes: body)
        guard reader.byte() == version, let at = reader.int64(),
              let id = reader.string(), let type = reader.string() else { return nil }
        var optional: [String?] = []
        for _ in 0..<5 {
            guard let field = reader.optionalString() else { return nil }
            optional.append(field)
        }
        guard let count = reader.uint16() else { return nil }
        var deliveries: [EventSummary.Delivery] = []
        for _ in 0..<count {
            guard let name = reader.string() else { return nil }
            deliveries.append(.init(destination: name, state: .pending))
        }
        guard reader.atEnd else { return nil }
        return EventSummary(id: id, receivedAt: Timestamp(milliseconds: at), type: type, subtype: optional[0],
                            environment: optional[1], bundleId: optional[2], originalTransactionId: optional[3],
                            transactionId: optional[4], deliveries: deliveries)
    }

    private static func append(_ field: String?, to out: inout [UInt8]) -> Bool {
        guard let field else {
            out.appendLittleEndian(absent)
            return true
        }
        let utf8 = Array(field.utf8)
        guard utf8.count < Int(absent) else { return false }
        out.appendLittleEndian(UInt16(utf8.count))
        out.append(contentsOf: utf8)
        return true
    }

    private static func checksum(header: [UInt8], body: UnsafeRawBufferPointer) -> UInt32 {
        let first = header.withUnsafeBytes { RecordFrame.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<8])) }
        return RecordFrame.checksum(body, continuing: first)
    }
}

/// Reads a record body front to back; every read checks its bounds.
private struct BodyReader {
    let bytes: UnsafeRawBufferPointer
    var offset = 0

    var atEnd: Bool { offset == bytes.count }

    mutating func byte() -> UInt8? {
        guard offset < bytes.count else { return nil }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func uint16() -> UInt16? {
        guard bytes.count - offset >= 2 else { return nil }
        defer { offset += 2 }
        return bytes.littleEndian(at: offset, as: UInt16.self)
    }

    mutating func int64() -> Int64? {
        guard bytes.count - offset >= 8 else { return nil }
        defer { offset += 8 }
        return bytes.littleEndian(at: offset, as: Int64.self)
    }

    /// A present string (absent is malformed here).
    mutating func string() -> String? {
        guard let outer = optionalString(), let field = outer else { return nil }
        return field
    }

    /// `.some(nil)` for an absent string, nil for malformed bytes.
    mutating func optionalString() -> String?? {
        guard let length = uint16() else { return nil }
        if length == 0xFFFF { return .some(nil) }
        guard bytes.count - offset >= Int(length) else { return nil }
        defer { offset += Int(length) }
        let slice = UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + Int(length))])
        // Strict UTF-8: a record we wrote never holds anything else.
        guard let text = String(validating: slice, as: UTF8.self) else { return nil }
        return .some(text)
    }
}
