/// The AMQP 0-9-1 data types as bytes (§4.2.5): big-endian integers, short strings (one octet
/// of length), long strings (four), bits packed into octets, and field tables. Writing is
/// what the client's methods need; reading checks every length against what is left, so a
/// truncated or lying method payload is an error, never an out-of-range read.
struct AMQPWriter {
    private(set) var bytes: [UInt8] = []

    mutating func octet(_ value: UInt8) { bytes.append(value) }

    mutating func short(_ value: UInt16) { bytes += [UInt8(value >> 8), UInt8(value & 0xFF)] }

    mutating func long(_ value: UInt32) {
        bytes += [UInt8(value >> 24), UInt8((value >> 16) & 0xFF), UInt8((value >> 8) & 0xFF), UInt8(value & 0xFF)]
    }

    mutating func longlong(_ value: UInt64) {
        long(UInt32(value >> 32))
        long(UInt32(value & 0xFFFF_FFFF))
    }

    /// A short string: at most 255 bytes (callers check the names they accept; a longer value
    /// is cut at 255 bytes rather than corrupting the frame).
    mutating func shortString(_ text: String) {
        let utf8 = Array(text.utf8.prefix(255))
        octet(UInt8(utf8.count))
        bytes += utf8
    }

    mutating func longString(_ value: [UInt8]) {
        long(UInt32(value.count))
        bytes += value
    }

    /// A field table of the values StoreRelay sends: strings (`S`), booleans (`t`) and nested
    /// tables (`F`).
    mutating func table(_ fields: [(String, AMQPFieldValue)]) {
        var inner = AMQPWriter()
        for (name, value) in fields {
            inner.shortString(name)
            switch value {
            case .string(let text):
                inner.octet(UInt8(ascii: "S"))
                inner.longString(Array(text.utf8))
            case .boolean(let flag):
                inner.octet(UInt8(ascii: "t"))
                inner.octet(flag ? 1 : 0)
            case .table(let nested):
                inner.octet(UInt8(ascii: "F"))
                inner.table(nested)
            }
        }
        longString(inner.bytes)
    }
}

/// A value in a field table StoreRelay writes.
enum AMQPFieldValue {
    case string(String)
    case boolean(Bool)
    case table([(String, AMQPFieldValue)])
}

/// Reads the data types from a method payload or a content header, front to back.
struct AMQPReader {
    struct Truncated: Error {}

    private let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func octet() throws(Truncated) -> UInt8 {
        guard remaining >= 1 else { throw Truncated() }
        offset += 1
        return bytes[offset - 1]
    }

    mutating func short() throws(Truncated) -> UInt16 {
        UInt16(try octet()) << 8 | UInt16(try octet())
    }

    mutating func long() throws(Truncated) -> UInt32 {
        UInt32(try short()) << 16 | UInt32(try short())
    }

    mutating func longlong() throws(Truncated) -> UInt64 {
        UInt64(try long()) << 32 | UInt64(try long())
    }

    mutating func shortString() throws(Truncated) -> String {
        let count = Int(try octet())
        return String(decoding: try take(count), as: UTF8.self)
    }

    mutating func longString() throws(Truncated) -> [UInt8] {
        try take(Int(try long()))
    }

    /// A field table, skipped whole: nothing StoreRelay reads from a broker lives in one.
    mutating func skipTable() throws(Truncated) {
        _ = try take(Int(try long()))
    }

    private mutating func take(_ count: Int) throws(Truncated) -> [UInt8] {
        guard count <= remaining else { throw Truncated() }
        offset += count
        return Array(bytes[offset - count..<offset])
    }
}
