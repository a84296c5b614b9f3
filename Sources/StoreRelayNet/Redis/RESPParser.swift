/// Parses RESP2 replies from bytes as they arrive, in any chunking, without ever parsing a
/// byte twice: a complete line or bulk string is consumed as soon as it is whole, and arrays
/// under construction wait on a stack, so a reply of a million elements trickling in costs
/// linear time. A pure state machine with no I/O.
///
/// Limits bound what a broken or hostile server can make us hold for one reply: its bytes and
/// its elements in all (nested ones included), its nesting depth, and the length of a line.
/// A size the server announces (`$N`, `*N`) is checked when announced, before any of it is
/// buffered. Any protocol error is final (the connection must be closed: its framing is lost).
public struct RESPParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Bytes of one reply as sent, every header line and nested element included. The
        /// default, 64 MiB, is far above any reply cluster mode asks for (SPEC "Hygiene").
        public var maxReplyBytes: Int
        /// Elements of one reply in all, nested arrays' included.
        public var maxReplyElements: Int
        public var maxDepth: Int
        public var maxLineBytes: Int

        public static let defaultMaxReplyBytes = 64 << 20

        public init(maxReplyBytes: Int = defaultMaxReplyBytes, maxReplyElements: Int = 1 << 20, maxDepth: Int = 16,
                    maxLineBytes: Int = 64 << 10) {
            self.maxReplyBytes = maxReplyBytes
            self.maxReplyElements = maxReplyElements
            self.maxDepth = maxDepth
            self.maxLineBytes = maxLineBytes
        }
    }

    /// Why the bytes are not RESP2, or are more than the limits allow.
    public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
        /// The bytes may be valid RESP2, but the reply is larger than `Limits` allow.
        public let exceedsLimits: Bool

        init(_ description: String, exceedsLimits: Bool = false) {
            self.description = description
            self.exceedsLimits = exceedsLimits
        }
    }

    /// An array whose elements are still arriving.
    private struct OpenArray: Sendable {
        var remaining: Int
        var elements: [RESPValue]
    }

    public let limits: Limits
    private var buffer: [UInt8] = []
    private var readIndex = 0
    private var stack: [OpenArray] = []
    private var failure: ProtocolError?
    /// What the reply under construction has cost so far: bytes consumed, elements announced.
    private var replyBytes = 0
    private var replyElements = 0

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Bytes received and not yet part of a complete reply's consumed items.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Whether part of a reply has been received (an item, or an array awaiting elements).
    public var hasPartialReply: Bool { failure == nil && (readIndex < buffer.count || !stack.isEmpty) }

    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        if readIndex == buffer.count {
            buffer.removeAll(keepingCapacity: buffer.capacity <= 1 << 20)
            readIndex = 0
        } else if readIndex > 4096 && readIndex * 2 >= buffer.count {
            buffer.removeFirst(readIndex)
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete reply, or nil when more bytes are needed.
    public mutating func next() throws(ProtocolError) -> RESPValue? {
        if let failure { throw failure }
        do {
            while let item = try nextItem() {
                var value = item
                // Close every array this value completes, innermost first.
                while true {
                    guard var top = stack.popLast() else {
                        replyBytes = 0
                        replyElements = 0
                        return value
                    }
                    top.elements.append(value)
                    top.remaining -= 1
                    guard top.remaining == 0 else {
                        stack.append(top)
                        break
                    }
                    value = .array(top.elements)
                }
            }
            return nil
        } catch {
            failure = error
            throw error
        }
    }

    /// One complete item (a scalar, a whole bulk string, an empty or null array), opening
    /// arrays on the way; nil when the next item is not complete yet.
    private mutating func nextItem() throws(ProtocolError) -> RESPValue? {
        while true {
            guard let lineEnd = try findLineEnd() else { return nil }
            let type = buffer[readIndex]
            let line = buffer[(readIndex + 1)..<lineEnd]
            try charge(bytes: lineEnd + 2 - readIndex)
            switch type {
            case UInt8(ascii: "+"):
                consume(through: lineEnd)
                return .simpleString(String(decoding: line, as: UTF8.self))
            case UInt8(ascii: "-"):
                consume(through: lineEnd)
                return .error(String(decoding: line, as: UTF8.self))
            case UInt8(ascii: ":"):
                let value = try Self.integer(line)
                consume(through: lineEnd)
                return .integer(value)
            case UInt8(ascii: "$"):
                let length = try Self.integer(line)
                if length == -1 {
                    consume(through: lineEnd)
                    return .bulkString(nil)
                }
                guard length >= 0 else { throw ProtocolError("negative bulk string length \(length)") }
                // Checked as announced: the bytes are never buffered.
                guard Int(length) <= limits.maxReplyBytes - replyBytes - (lineEnd + 2 - readIndex) - 2 else {
                    throw ProtocolError("a bulk string of \(length) bytes takes the reply over \(Self.size(limits.maxReplyBytes))",
                                        exceedsLimits: true)
                }
                let start = lineEnd + 2
                let end = start + Int(length)
                guard buffer.count >= end + 2 else { return nil }  // wait for the whole string
                guard buffer[end] == 13, buffer[end + 1] == 10 else {
                    throw ProtocolError("bulk string not followed by CRLF")
                }
                let bytes = Array(buffer[start..<end])
                replyBytes += end + 2 - readIndex
                readIndex = end + 2
                return .bulkString(bytes)
            case UInt8(ascii: "*"):
                let count = try Self.integer(line)
                consume(through: lineEnd)
                if count == -1 { return .array(nil) }
                guard count >= 0 else { throw ProtocolError("negative array length \(count)") }
                guard Int(count) <= limits.maxReplyElements - replyElements else {
                    throw ProtocolError("an array of \(count) elements takes the reply over \(limits.maxReplyElements) elements",
                                        exceedsLimits: true)
                }
                replyElements += Int(count)
                if count == 0 { return .array([]) }
                guard stack.count < limits.maxDepth else {
                    throw ProtocolError("arrays nested deeper than \(limits.maxDepth)", exceedsLimits: true)
                }
                stack.append(OpenArray(remaining: Int(count), elements: []))
                stack[stack.count - 1].elements.reserveCapacity(min(Int(count), 1024))
            default:
                throw ProtocolError("unknown reply type byte 0x\(String(type, radix: 16))")
            }
        }
    }

    /// The index of the CR ending the line at `readIndex`, nil when it has not all arrived.
    /// A line is at least its type byte; a bare CR or LF inside it is an error.
    private func findLineEnd() throws(ProtocolError) -> Int? {
        guard readIndex < buffer.count else { return nil }
        let bound = min(buffer.count, readIndex + limits.maxLineBytes + 3)
        var index = readIndex + 1
        while index < bound {
            switch buffer[index] {
            case 13:
                guard index + 1 < buffer.count else { return nil }
                guard buffer[index + 1] == 10 else { throw ProtocolError("CR not followed by LF") }
                return index
            case 10:
                throw ProtocolError("LF without CR")
            default:
                index += 1
            }
        }
        if bound - readIndex >= limits.maxLineBytes + 3 {
            throw ProtocolError("line longer than \(limits.maxLineBytes) bytes", exceedsLimits: true)
        }
        return nil
    }

    private mutating func consume(through lineEnd: Int) {
        replyBytes += lineEnd + 2 - readIndex
        readIndex = lineEnd + 2
    }

    /// Fails when `bytes` more (a line about to be consumed) take the reply over its bound.
    private func charge(bytes: Int) throws(ProtocolError) {
        guard bytes <= limits.maxReplyBytes - replyBytes else {
            throw ProtocolError("the reply is over \(Self.size(limits.maxReplyBytes))", exceedsLimits: true)
        }
    }

    /// `64 MiB`, or the exact count of bytes when it is not a whole number of MiB.
    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    /// A signed decimal that fits in Int64: no sign alone, no spaces, no leading `+`.
    private static func integer(_ bytes: ArraySlice<UInt8>) throws(ProtocolError) -> Int64 {
        var digits = bytes
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw ProtocolError("'\(String(decoding: bytes.prefix(24), as: UTF8.self))' is not an integer")
        }
        var value: Int64 = 0
        for digit in digits {
            let (times, overflow1) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit - 48))
            guard !overflow1, !overflow2 else { throw ProtocolError("integer out of range") }
            value = sum
        }
        return negative ? -value : value
    }
}
