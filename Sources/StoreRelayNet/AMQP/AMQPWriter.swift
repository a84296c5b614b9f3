/// The AMQP 0-9-1 data types written as bytes (§4.2.5): big-endian integers, short strings
/// (one octet of length), long strings (four), bits packed into octets, and field tables,
/// as far as the client's methods need them. `AMQPReader` is the other direction.
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
