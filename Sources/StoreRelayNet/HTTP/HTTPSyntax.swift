/// Byte classes from the HTTP grammar, shared by the request parser and the response writer.
///
/// Everything here works on bytes, not `Character`s: the wire format is octets, and a parser
/// that goes through `String` first would accept things the RFC forbids (or decode what it must
/// not). RFC 9110 §5.6.2 (tokens), §5.5 (field values).
package enum HTTPSyntax {
    package static let cr = UInt8(ascii: "\r")
    package static let lf = UInt8(ascii: "\n")
    package static let space = UInt8(ascii: " ")
    package static let tab = UInt8(ascii: "\t")
    package static let colon = UInt8(ascii: ":")

    /// `tchar` (RFC 9110 §5.6.2): the characters allowed in methods and header names.
    package static func isTokenChar(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
             UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
             UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    package static func isToken<C: Collection<UInt8>>(_ bytes: C) -> Bool {
        !bytes.isEmpty && bytes.allSatisfy(isTokenChar)
    }

    /// `field-vchar / SP / HTAB` (RFC 9110 §5.5), obs-text included: anything but controls.
    package static func isFieldValueChar(_ byte: UInt8) -> Bool {
        byte == tab || (byte >= 0x20 && byte != 0x7F)
    }

    package static func isWhitespace(_ byte: UInt8) -> Bool { byte == space || byte == tab }

    /// Visible ASCII, the only bytes allowed in a request target (RFC 3986 characters).
    package static func isTargetChar(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x7F }

    package static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    package static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a") + 10)
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A") + 10)
        default: nil
        }
    }

    /// ASCII case-insensitive equality, enough for header names and tokens.
    package static func equalsIgnoringCase(_ lhs: String, _ rhs: String) -> Bool {
        let a = lhs.utf8, b = rhs.utf8
        guard a.count == b.count else { return false }
        return zip(a, b).allSatisfy { lower($0) == lower($1) }
    }

    package static func lower(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
    }

    /// Splits a comma-separated header list (RFC 9110 §5.6.1), trimming whitespace and
    /// dropping empty members, lowercased for comparison.
    package static func lowercasedListMembers(_ value: String) -> [String] {
        value.split(separator: ",").compactMap { member in
            let trimmed = member.utf8.drop(while: isWhitespace).reversed().drop(while: isWhitespace).reversed()
            guard !trimmed.isEmpty else { return nil }
            return String(decoding: trimmed.map(lower), as: UTF8.self)
        }
    }
}
