/// `application/x-www-form-urlencoded` (WHATWG URL §5): query strings and page form bodies.
///
/// Decoding is total: a malformed escape (`%zz`) is kept literally rather than rejected, and
/// bytes that are not UTF-8 become U+FFFD, so hostile input yields odd values that the
/// validators downstream refuse, never a crash.
public enum FormEncoding {
    /// The pairs of `text` in order; `+` is a space, `%XX` a byte. Pairs without `=` have an
    /// empty value; empty pairs (`a=1&&b=2`) are skipped.
    public static func decode(_ text: String) -> [(name: String, value: String)] {
        text.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            guard let equals = pair.firstIndex(of: "=") else { return (percentDecode(pair), "") }
            return (percentDecode(pair[..<equals]), percentDecode(pair[pair.index(after: equals)...]))
        }
    }

    /// The first value of `name` in `text`, or nil.
    public static func value(_ name: String, in text: String?) -> String? {
        guard let text else { return nil }
        return decode(text).first { $0.name == name }?.value
    }

    /// `name=value&...`, escaping everything but unreserved characters (RFC 3986 §2.3).
    public static func encode(_ pairs: [(String, String)]) -> String {
        pairs.map { percentEncode($0.0) + "=" + percentEncode($0.1) }.joined(separator: "&")
    }

    public static func percentEncode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.append(byte)
            default:
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    public static func percentDecode<Text: StringProtocol>(_ text: Text) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "+") {
                out.append(UInt8(ascii: " "))
            } else if byte == UInt8(ascii: "%"), index + 2 < bytes.count,
                      let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) {
                out.append(high << 4 | low)
                index += 2
            } else {
                out.append(byte)
            }
            index += 1
        }
        return String(decoding: out, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
