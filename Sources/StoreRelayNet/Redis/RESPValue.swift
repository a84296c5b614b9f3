/// One RESP2 reply (the Redis serialization protocol): what a Redis or Valkey server answers.
/// An error reply is a value, not a thrown error: in a pipeline or a transaction it is one
/// answer among others, and the caller decides what it means.
public enum RESPValue: Sendable, Hashable, CustomStringConvertible {
    /// `+OK`
    case simpleString(String)
    /// `-ERR unknown command` (the first word is the error's kind: ERR, NOSCRIPT, WRONGTYPE...)
    case error(String)
    /// `:42`
    case integer(Int64)
    /// `$5 hello`; nil is the null bulk string (`$-1`), a missing key.
    case bulkString([UInt8]?)
    /// `*2 ...`; nil is the null array (`*-1`), e.g. a blocking read that timed out.
    case array([RESPValue]?)

    /// The text of a simple or bulk string, nil for anything else (and for null).
    public var string: String? {
        switch self {
        case .simpleString(let text): text
        case .bulkString(let bytes?): String(decoding: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// The bytes of a bulk string, nil for anything else (and for null).
    public var bytes: [UInt8]? {
        if case .bulkString(let bytes?) = self { bytes } else { nil }
    }

    /// The integer of an integer reply, or of a string holding a decimal integer.
    public var integer: Int64? {
        switch self {
        case .integer(let value): value
        case .bulkString, .simpleString: string.flatMap { Int64($0) }
        default: nil
        }
    }

    /// The elements of a non-null array.
    public var elements: [RESPValue]? {
        if case .array(let elements?) = self { elements } else { nil }
    }

    public var isNull: Bool {
        switch self {
        case .bulkString(nil), .array(nil): true
        default: false
        }
    }

    /// The error's kind (`NOSCRIPT`, `WRONGTYPE`...), nil when this is not an error reply.
    public var errorKind: Substring? {
        guard case .error(let message) = self else { return nil }
        return message.split(separator: " ", maxSplits: 1).first ?? Substring(message)
    }

    /// The reply for a log line or an error message: at most about `describedBytes` bytes
    /// (then `…`), however large the reply. A server may answer anything, and an unexpected
    /// answer of 50 MB must not become a 50 MB log line.
    public var description: String {
        var text = ""
        var budget = Self.describedBytes
        describe(into: &text, budget: &budget)
        return text
    }

    /// How much of a reply `description` shows.
    public static let describedBytes = 300

    private func describe(into text: inout String, budget: inout Int) {
        func append(_ part: some StringProtocol) {
            guard budget > 0 else { return }
            let kept = part.utf8.count <= budget ? String(part) : Self.prefix(part, bytes: budget) + "…"
            text += kept
            budget -= part.utf8.count <= budget ? part.utf8.count : budget
        }
        switch self {
        case .simpleString(let line): append("+" + line)
        case .error(let message): append("-" + message)
        case .integer(let value): append(":\(value)")
        case .bulkString(nil): append("(nil)")
        case .bulkString(let bytes?):
            append("\"" + String(decoding: bytes.prefix(budget + 1), as: UTF8.self) + (bytes.count > budget ? "" : "\""))
        case .array(nil): append("(nil array)")
        case .array(let elements?):
            append("[")
            for (index, element) in elements.enumerated() {
                guard budget > 0 else { break }
                if index > 0 { append(", ") }
                element.describe(into: &text, budget: &budget)
            }
            if budget > 0 { append("]") } else if !text.hasSuffix("…") { text += "…" }
        }
    }

    /// The longest prefix of `text` of at most `bytes` UTF-8 bytes that ends on a character.
    private static func prefix(_ text: some StringProtocol, bytes: Int) -> String {
        var count = 0
        var end = text.startIndex
        for character in text {
            let size = character.utf8.count
            guard count + size <= bytes else { break }
            count += size
            end = text.index(after: end)
        }
        return String(text[..<end])
    }
}
