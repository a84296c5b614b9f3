/// Reads the AMQP 0-9-1 data types from a method payload or a content header, front to back.
/// Every length is checked against what is left, so a truncated or lying payload is an
/// error, never an out-of-range read.
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
