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

    public var description: String {
        switch self {
        case .simpleString(let text): "+\(text)"
        case .error(let message): "-\(message)"
        case .integer(let value): ":\(value)"
        case .bulkString(nil): "(nil)"
        case .bulkString(let bytes?): "\"\(String(decoding: bytes.prefix(200), as: UTF8.self))\""
        case .array(nil): "(nil array)"
        case .array(let elements?): "[" + elements.map(\.description).joined(separator: ", ") + "]"
        }
    }
}
