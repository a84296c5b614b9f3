/// Compact JSON output: no whitespace, members in order, numbers as their original text,
/// non-ASCII written as UTF-8 and only what RFC 8259 requires escaped (plus U+2028/U+2029,
/// which break JavaScript consumers).
extension JSONValue {
    public func serialized() -> String {
        String(decoding: serializedBytes(), as: UTF8.self)
    }

    public func serializedBytes() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        serialize(into: &out)
        return out
    }

    public func serialize(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let b): out.append(contentsOf: (b ? "true" : "false").utf8)
        case .number(let n): out.append(contentsOf: n.text.utf8)
        case .string(let s): JSONValue.serializeString(s, into: &out)
        case .array(let elements):
            out.append(UInt8(ascii: "["))
            for (i, element) in elements.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                element.serialize(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (i, member) in object.members.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                JSONValue.serializeString(member.key, into: &out)
                out.append(UInt8(ascii: ":"))
                member.value.serialize(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    static func serializeString(_ string: String, into out: inout [UInt8]) {
        var string = string
        // Native strings are contiguous UTF-8: copy runs that need no escaping in bulk.
        string.withUTF8 { bytes in serializeString(utf8: bytes, into: &out) }
    }

    /// Appends `bytes`, which must be valid UTF-8, as a JSON string: exactly what
    /// `JSONValue.string(String(decoding: bytes, as: UTF8.self))` serializes to, without
    /// making that String (a copy and a validation pass over a body of kilobytes).
    public static func serializeString(utf8 bytes: UnsafeBufferPointer<UInt8>, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        if let base = bytes.baseAddress {
            let count = bytes.count
            var runStart = 0
            var index = 0
            while true {
                // Eight ordinary bytes at a time; 0xE2 stops the skip because it may start
                // U+2028 or U+2029 (E2 80 A8 / E2 80 A9), which are escaped.
                while index &+ 8 <= count {
                    let word = ByteWords.load(base, index)
                    let attention = ByteWords.below(word, 0x20) | ByteWords.matches(word, UInt8(ascii: "\""))
                        | ByteWords.matches(word, UInt8(ascii: "\\")) | ByteWords.matches(word, 0xE2)
                    if attention != 0 { break }
                    index &+= 8
                }
                guard index < count else { break }
                let byte = bytes[index]
                if byte >= 0x20 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\") && byte != 0xE2 {
                    index += 1
                    continue
                }
                // Other E2 sequences pass through.
                if byte == 0xE2 {
                    guard index + 2 < count, bytes[index + 1] == 0x80,
                          bytes[index + 2] == 0xA8 || bytes[index + 2] == 0xA9 else {
                        index += 1
                        continue
                    }
                }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
                if byte == 0xE2 {
                    out.append(contentsOf: (bytes[index + 2] == 0xA8 ? "\\u2028" : "\\u2029").utf8)
                    index += 3
                } else {
                    appendEscape(of: byte, into: &out)
                    index += 1
                }
                runStart = index
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<count]))
        }
        out.append(UInt8(ascii: "\""))
    }

    private static func appendEscape(of byte: UInt8, into out: inout [UInt8]) {
        switch byte {
        case UInt8(ascii: "\""): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
        case UInt8(ascii: "\\"): out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
        case 0x0A: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
        case 0x0D: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
        case 0x09: out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
        default:
            let hex: StaticString = "0123456789abcdef"
            hex.withUTF8Buffer { digits in
                out.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                        digits[Int(byte >> 4)], digits[Int(byte & 0xF)]])
            }
        }
    }
}
