/// Splits a byte stream into HTTP/1.1 messages (requests or responses) framed by
/// `Content-Length`: the harness's own minimal parser, a pure state machine fed by whatever
/// `recv` returned. Chunked bodies are refused: neither the gateway's answers nor its webhook
/// client use them, so meeting one means the harness is measuring something unexpected.
public struct HTTPMessageFramer {
    /// One complete message.
    public struct Message {
        /// `POST /path HTTP/1.1` or `HTTP/1.1 200 OK`.
        public var startLine: Substring
        public var headers: [(name: Substring, value: Substring)]
        public var body: ArraySlice<UInt8>

        /// The status code of a response, 0 if the start line is not a status line.
        public var status: Int {
            let parts = startLine.split(separator: " ", maxSplits: 2)
            return parts.count >= 2 ? Int(parts[1]) ?? 0 : 0
        }

        /// The target of a request (`/path`).
        public var target: Substring {
            let parts = startLine.split(separator: " ", maxSplits: 2)
            return parts.count >= 2 ? parts[1] : ""
        }

        public func header(_ name: String) -> Substring? {
            headers.first { $0.name.lowercased() == name }?.value
        }
    }

    private var buffer: [UInt8] = []
    private var consumed = 0

    public init() {}

    public mutating func append(_ bytes: UnsafeRawBufferPointer) {
        if consumed == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            consumed = 0
        } else if consumed > 65_536 {
            buffer.removeFirst(consumed)
            consumed = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete message, nil until one has fully arrived.
    public mutating func next() throws(BenchError) -> Message? {
        guard let headEnd = findHeadEnd() else { return nil }
        let head = String(decoding: buffer[consumed..<headEnd], as: UTF8.self)
        var lines = head.split(separator: "\r\n", omittingEmptySubsequences: false)
        guard !lines.isEmpty else { throw BenchError("empty HTTP message head") }
        let startLine = lines.removeFirst()
        var headers: [(name: Substring, value: Substring)] = []
        var length = 0
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw BenchError("bad header line: \(line)") }
            let name = line[..<colon]
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            let lower = name.lowercased()
            if lower == "content-length" { length = Int(value) ?? 0 }
            if lower == "transfer-encoding" { throw BenchError("chunked message: the harness frames by Content-Length only") }
            headers.append((name, value))
        }
        let bodyStart = headEnd + 4
        guard buffer.count - bodyStart >= length else { return nil }
        let body = buffer[bodyStart..<(bodyStart + length)]
        consumed = bodyStart + length
        return Message(startLine: startLine, headers: headers, body: body)
    }

    private func findHeadEnd() -> Int? {
        var index = consumed
        let end = buffer.count - 3
        while index < end {
            if buffer[index] == 13, buffer[index + 1] == 10, buffer[index + 2] == 13, buffer[index + 3] == 10 {
                return index
            }
            index += 1
        }
        return nil
    }
}
