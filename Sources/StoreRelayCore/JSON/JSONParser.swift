/// A strict RFC 8259 parser over UTF-8 bytes.
///
/// Strict because its input is untrusted: no trailing commas, comments, NaN, leading zeros,
/// unescaped control characters, invalid UTF-8 or duplicate member names; nesting is capped so
/// a hostile body cannot exhaust the stack. Duplicates are refused because JSON readers
/// disagree on which one wins: `{"signedPayload": forged, "signedPayload": genuine}` would be
/// verified by us on one value and acted on downstream on the other.
///
/// It reads through an `UnsafeBufferPointer` lent by `withParser`, never stored beyond it:
/// App Store payloads are tens of kilobytes parsed on every request, and array indexing with
/// its bounds checks and retains cost more than the parsing itself. Every read is guarded by
/// an explicit `index < bytes.count` instead.
struct JSONParser {
    static let defaultMaxDepth = 64
    /// Up to this many members an object's names are checked for duplicates by a scan (App
    /// Store objects have a few dozen at most); beyond it, through a set.
    static let namesScannedLinearly = 16

    let bytes: UnsafeBufferPointer<UInt8>
    var index = 0
    private let maxDepth: Int

    private init(bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    /// Runs `body` with a parser over `bytes`, which must not escape it.
    static func withParser<R>(
        _ bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = JSONParser.defaultMaxDepth,
        _ body: (inout JSONParser) throws(JSONError) -> R
    ) throws(JSONError) -> R {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        return try body(&parser)
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
        // Names seen, once an object is large: a linear scan per member would make a hostile
        // body of 100,000 distinct names cost seconds of CPU before any signature is checked.
        var seen: Set<String>?
        skipWhitespace()
        if peek() == UInt8(ascii: "}") { index += 1; return object }
        while true {
            skipWhitespace()
            guard peek() == UInt8(ascii: "\"") else { throw error("expected a member name") }
            let keyOffset = index
            let key = try parseString()
            skipWhitespace()
            guard peek() == UInt8(ascii: ":") else { throw error("expected ':'") }
            index += 1
            skipWhitespace()
            let value = try parseValue(depth: depth)
            let isNew: Bool
            if seen == nil && object.count >= Self.namesScannedLinearly { seen = Set(object.keys) }
            if seen != nil {
                isNew = seen!.insert(key).inserted
                if isNew { object.appendUnchecked(key, value) }
            } else {
                isNew = object.appendIfNew(key, value)
            }
            guard isNew else {
                // The name as JSON (escaped, at most 64 characters): it ends up in logs and answers.
                let name = JSONValue.string(String(key.prefix(64))).serializedBytes()
                throw JSONError(offset: keyOffset, reason: "duplicate member name \(String(decoding: name, as: UTF8.self))")
            }
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
        // The grammar above admits only ASCII.
        return JSONNumber(validatedText: String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<index]), as: UTF8.self))
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

    func peek() -> UInt8? { index < bytes.count ? bytes[index] : nil }

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

    func error(_ reason: String) -> JSONError { JSONError(offset: index, reason: reason) }
}

extension JSONValue {
    /// Parses one JSON document. Nesting is capped at `maxDepth` levels.
    public static func parse(_ bytes: [UInt8], maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { buffer throws(JSONError) in
            try parse(utf8: buffer, maxDepth: maxDepth)
        }
    }

    /// Parses one JSON document from bytes the caller lends for the duration of the call
    /// (a slice of a larger buffer, without copying it first).
    public static func parse(utf8 bytes: UnsafeBufferPointer<UInt8>, maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        try JSONParser.withParser(bytes, maxDepth: maxDepth) { parser throws(JSONError) in try parser.parseDocument() }
    }

    public static func parse(_ text: String, maxDepth: Int = 64) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }
}
