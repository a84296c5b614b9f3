/// Cuts a broker's byte stream into `AMQPFrame`s (AMQP 0-9-1 §4.2.3), without I/O: bytes go in
/// with `feed`, frames come out of `next()`. Everything a broker sends is checked before it is
/// trusted: the frame type, the size against the negotiated frame-max, the frame-end octet.
/// A broker that does not speak 0-9-1 answers the protocol header with its own (`AMQP` and
/// another version) and closes: that is told apart, so the error says which version it wanted.
/// An error is final: the stream cannot be resynchronized after it.
public struct AMQPFrameParser: Sendable {
    public struct ProtocolError: Error, Sendable, Hashable, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }

    /// The largest frame accepted, overhead included: the client's own maximum until
    /// Connection.Tune, the negotiated frame-max after (never below the spec's minimum, 4096).
    public var maxFrameSize: Int
    private var buffer: [UInt8] = []
    private var offset = 0
    private var error: ProtocolError?

    public init(maxFrameSize: Int = 131_072) {
        self.maxFrameSize = max(maxFrameSize, 4096)
    }

    /// Bytes received and not yet handed out in a frame.
    public var bufferedByteCount: Int { buffer.count - offset }

    /// Bytes held, handed out or not (tests: the buffer does not grow with the stream).
    var storedByteCount: Int { buffer.count }

    public mutating func feed(_ bytes: some Sequence<UInt8>) {
        guard error == nil else { return }
        // What is left is at most one partial frame: drop what was handed out, so a long-lived
        // connection whose reads keep splitting frames does not grow the buffer for ever.
        if offset > 0 {
            buffer.removeFirst(offset)
            offset = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next complete frame; nil when more bytes are needed.
    public mutating func next() throws(ProtocolError) -> AMQPFrame? {
        if let error { throw error }
        let available = buffer.count - offset
        guard available >= 1 else { return nil }
        let typeByte = buffer[offset]
        if typeByte == UInt8(ascii: "A") {
            // Not a frame type: wait for a whole protocol header to say what the broker wants.
            guard available >= 8 else { return nil }
            guard Array(buffer[offset..<offset + 4]) == Array("AMQP".utf8) else { throw fail("unknown frame type \(typeByte)") }
            let version = buffer[offset + 5...offset + 7].map { String($0) }.joined(separator: "-")
            throw fail("the broker does not speak AMQP 0-9-1 (it answered with protocol header \(version))")
        }
        guard let kind = AMQPFrame.Kind(rawValue: typeByte) else {
            throw fail("unknown frame type \(typeByte)")
        }
        guard available >= 7 else { return nil }
        let channel = UInt16(buffer[offset + 1]) << 8 | UInt16(buffer[offset + 2])
        var size = 0
        for index in 3..<7 { size = size << 8 | Int(buffer[offset + index]) }
        guard size <= maxFrameSize - AMQPFrame.overhead else {
            throw fail("a frame of \(size) bytes exceeds the frame-max of \(maxFrameSize)")
        }
        guard available >= size + AMQPFrame.overhead else { return nil }
        let start = offset + 7
        guard buffer[start + size] == AMQPFrame.frameEnd else {
            throw fail("frame-end octet is \(buffer[start + size]), not 0xCE")
        }
        if kind == .heartbeat, channel != 0 { throw fail("a heartbeat on channel \(channel)") }
        let frame = AMQPFrame(kind, channel: channel, payload: Array(buffer[start..<start + size]))
        offset = start + size + 1
        if offset == buffer.count {
            buffer.removeAll(keepingCapacity: true)
            offset = 0
        }
        return frame
    }

    private mutating func fail(_ message: String) -> ProtocolError {
        let error = ProtocolError(message)
        self.error = error
        buffer = []
        offset = 0
        return error
    }
}
