/// Splits a NATS server's byte stream into operations (NATS "Client Protocol": a control line
/// ended by CRLF, then for MSG and HMSG a payload of the announced length and CRLF). A pure
/// state machine: bytes in with `append`, operations out with `next`, no I/O. Lines and
/// payloads are bounded by `Limits`, so a broken or hostile server cannot make it buffer
/// without end; anything malformed is an error and the connection is closed.
public struct NATSParser {
    public struct Limits: Sendable {
        /// A control line (INFO can list many cluster URLs).
        public var maxLine = 64 * 1024
        /// One message's headers and payload together.
        public var maxMessage = 8 << 20

        public init() {}
    }

    private enum State {
        case line
        /// A MSG/HMSG line was read; `total` bytes (headers first) and CRLF follow.
        case payload(NATSInboundMessage, headerLength: Int?, total: Int)
    }

    private let limits: Limits
    private var state = State.line
    private var buffer: [UInt8] = []
    private var offset = 0
    /// The error that stopped parsing: the stream cannot be read past it, so it is final.
    private var failure: NATSError?

    public init(limits: Limits = Limits()) { self.limits = limits }

    /// Adds bytes that arrived.
    public mutating func append(_ bytes: some Collection<UInt8>) {
        if offset > 0, offset == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            offset = 0
        } else if offset > 64 * 1024 {
            buffer.removeFirst(offset)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete operation, or nil until more bytes arrive. After an error, every
    /// call throws it again.
    public mutating func next() throws(NATSError) -> NATSServerMessage? {
        if let failure { throw failure }
        do throws(NATSError) {
            return try nextOperation()
        } catch {
            failure = error
            throw error
        }
    }

    /// Bytes received and not yet handed out as an operation.
    public var bufferedByteCount: Int { buffer.count - offset }

    private mutating func nextOperation() throws(NATSError) -> NATSServerMessage? {
        while true {
            switch state {
            case .line:
                guard let newline = buffer[offset...].firstIndex(of: UInt8(ascii: "\n")) else {
                    if buffer.count - offset > limits.maxLine { throw Self.error("a control line longer than \(limits.maxLine) bytes") }
                    return nil
                }
                var end = newline
                if end > offset, buffer[end - 1] == UInt8(ascii: "\r") { end -= 1 }
                guard end - offset <= limits.maxLine else { throw Self.error("a control line longer than \(limits.maxLine) bytes") }
                let line = Array(buffer[offset..<end])
                offset = newline + 1
                if line.isEmpty { continue }  // tolerated between operations
                if let message = try parseLine(line) { return message }
            case .payload(var message, let headerLength, let total):
                guard buffer.count - offset >= total + 2 else { return nil }
                guard buffer[offset + total] == UInt8(ascii: "\r"), buffer[offset + total + 1] == UInt8(ascii: "\n") else {
                    throw Self.error("a message payload not followed by CRLF")
                }
                if let headerLength {
                    message.headers = Array(buffer[offset..<offset + headerLength])
                    message.payload = Array(buffer[offset + headerLength..<offset + total])
                } else {
                    message.payload = Array(buffer[offset..<offset + total])
                }
                offset += total + 2
                state = .line
                return .message(message)
            }
        }
    }

    /// One control line; a MSG or HMSG line switches to reading its payload (nil then).
    private mutating func parseLine(_ line: [UInt8]) throws(NATSError) -> NATSServerMessage? {
        let operationEnd = line.firstIndex { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } ?? line.endIndex
        let operation = String(decoding: line[..<operationEnd], as: UTF8.self).uppercased()
        let rest = Array(line[operationEnd...].drop { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
        switch operation {
        case "PING": return .ping
        case "PONG": return .pong
        case "+OK": return .ok
        case "-ERR":
            var text = String(decoding: rest, as: UTF8.self)
            if text.hasPrefix("'"), text.hasSuffix("'"), text.count >= 2 { text = String(text.dropFirst().dropLast()) }
            return .error(text)
        case "INFO":
            guard let info = NATSServerInfo(json: rest) else { throw Self.error("an INFO line without a JSON object") }
            return .info(info)
        case "MSG", "HMSG":
            let isHMSG = operation == "HMSG"
            let article = isHMSG ? "an" : "a"
            let words = rest.split(whereSeparator: { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") })
                .map { String(decoding: $0, as: UTF8.self) }
            let counts = isHMSG ? 2 : 1
            guard words.count == 2 + counts || words.count == 3 + counts else {
                throw Self.error("\(article) \(operation) line with \(words.count) arguments")
            }
            guard let total = Self.length(words[words.count - 1]) else { throw Self.error("\(article) \(operation) line with a bad size") }
            var headerLength: Int?
            if isHMSG {
                guard let length = Self.length(words[words.count - 2]), length <= total else {
                    throw Self.error("an HMSG line with a bad header size")
                }
                headerLength = length
            }
            guard total <= limits.maxMessage else { throw Self.error("a message of \(total) bytes (the limit is \(limits.maxMessage))") }
            let replyTo = words.count == 3 + counts ? words[2] : nil
            let message = NATSInboundMessage(subject: words[0], sid: words[1], replyTo: replyTo, headers: nil, payload: [])
            state = .payload(message, headerLength: headerLength, total: total)
            return nil
        default:
            throw Self.error("an unknown operation '\(operation.prefix(20))'")
        }
    }

    /// A decimal size of at most 10 digits.
    private static func length(_ text: String) -> Int? {
        guard (1...10).contains(text.utf8.count), text.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        return Int(text)
    }

    private static func error(_ what: String) -> NATSError {
        NATSError(.protocolError, "the NATS server sent \(what)")
    }
}
