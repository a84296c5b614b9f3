/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// Strict because its input is untrusted: no trailing commas, comments, NaN, leading zeros,
/// unescaped control characters or invalid UTF-8; nesting is capped so a hostile body cannot
/// exhaust the stack.
struct JSONParser {
    static let defaultMaxDepth = 64

    private let bytes: [UInt8]
    private var index = 0
    private let maxDepth: Int

    init(bytes: [UInt8], maxDepth: Int = JSONParser.defaultMaxDepth) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue(depth: 0)
        skipWhitespace()
        guard index == bytes.count else { throw error("unexpected data after the value") }
        return value
    }

    mutating func parseNumberOnly() throws(JSONError) -> JSONNumber {
        let number = try parseNumber()
        guard index == bytes.count else { throw error("not a number") }
        return number
    }

    // MARK: Values

    private mutating func parseValue(depth: Int) throws(JSONError) -> JSONValue {
        guard index < bytes.count else { throw error("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return .object(try parseObject(depth: depth + 1))
        case UInt8(ascii: "["): return .array(try parseArray(depth: depth + 1))
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw error("unexpected character")
        }
    }

    private mutating func parseObject(depth: Int) throws(JSONError) -> JSONObject {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth)") }
        index += 1
        var object = JSONObject()
        skipWhitespace()
        if peek() == UInt8(ascii: "}") { index += 1; return object }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            object[key] = try parseValue(depth: depth)
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return object
            default: throw error("expected ',' or '}'")
            }
        }
    }

    private mutating func parseArray(depth: Int) throws(JSONError) -> [JSONValue] {
        guard depth <= maxDepth else { throw error("nesting deeper than \(maxDepth)") }
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if peek() == UInt8(ascii: "]") { index += 1; return array }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            switch peek() {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return array
            default: throw error("expected ',' or ']'")
            }
        }
    }

    // MARK: Scalars

    private mutating func parseNumber() throws(JSONError) -> JSONNumber {
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw error("expected a digit") }
        index += 1
        if first == UInt8(ascii: "0"), let next = peek(), isDigit(next) {
            throw error("leading zero in a number")
        }
        skipDigits()
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let d = peek(), isDigit(d) else { throw error("expected a digit after '.'") }
            skipDigits()
        }
        if let e = peek(), e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            index += 1
            if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { index += 1 }
            guard let d = peek(), isDigit(d) else { throw error("expected a digit in the exponent") }
            skipDigits()
        }
        return JSONNumber(validatedText: String(decoding: bytes[start..<index], as: UTF8.self))
    }

    private mutating func parseString() throws(JSONError) -> String {
        index += 1  // opening quote
        let start = index
        // Fast path: no escapes, so the bytes between the quotes are the string. Pure ASCII
        // (base64 JWS segments, ids: most of what Apple sends) needs no UTF-8 validation.
        var highBits: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = bytes[start..<index]
                index += 1
                if highBits < 0x80 { return String(decoding: slice, as: UTF8.self) }
                guard let string = String(validating: slice, as: UTF8.self) else {
                    throw JSONError(offset: start, reason: "invalid UTF-8 in a string")
                }
                return string
            }
            highBits |= byte
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw error("control character in a string") }
            index += 1
        }
        var utf8 = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw JSONError(offset: start, reason: "invalid UTF-8 in a string")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &utf8)
            case 0..<0x20:
                throw error("control character in a string")
            default:
                utf8.append(byte)
                index += 1
            }
        }
        throw error("unterminated string")
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONError) {
        guard let byte = peek() else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("unpaired surrogate")
            }
            utf8.append(contentsOf: String(Character(Unicode.Scalar(scalar)!)).utf8)
        default:
            throw error("invalid escape")
        }
    }

    private mutating func parseHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw error("unexpected end of input") }
        let matches = literal.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        guard matches else { throw error("unexpected character") }
        index += count
    }

    // MARK: Bytes

    private func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while index < bytes.count, isDigit(bytes[index]) { index += 1 }
    }

    private mutating func skipWhitespace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private func error(_ reason: String) -> JSONError { JSONError(offset: index, reason: reason) }
}

extension JSONValue {
    /// Parses one JSON document. Nesting is capped at `maxDepth` levels.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        return try parser.parseDocument()
    }

    public static func parse(_ text: String, maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}
