/// How a message's body is delimited (RFC 9112 §6.3).
public enum HTTPBodyFraming: Sendable, Equatable {
    /// No body (a request without length headers; a response to HEAD, a 1xx, 204 or 304).
    case none
    case length(Int)
    case chunked
    /// A response body that runs until the server closes the connection.
    case untilClose
}

/// The HTTP/1 framing both directions share: the head's section of CRLF-terminated lines, then
/// a body by length, chunked coding (with extensions and trailers) or until the connection
/// closes. The server's `HTTPRequestParser` and the client's response parser are this decoder
/// plus what their start line and headers mean.
///
/// A pure state machine with no I/O: feed bytes in any chunking, then call `next()` until it
/// returns nil. After `.head`, the caller says how the body is framed (`expectBody`), having
/// read the head's fields. Bytes after a complete message begin the next one (pipelining).
/// Any error is final: the same error is thrown on every later call.
///
/// Limits apply as early as the bytes allow: the head as soon as more than `maxHeadBytes` are
/// buffered without its end, a declared length before any body byte, a chunked body as soon as
/// a chunk size would take it over the limit.
public struct HTTPMessageDecoder: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Start line plus header fields, CRLFs included (trailers get the same allowance).
        public var maxHeadBytes: Int
        /// Decoded body bytes.
        public var maxBodyBytes: Int

        public init(maxHeadBytes: Int, maxBodyBytes: Int) {
            self.maxHeadBytes = maxHeadBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    public enum Event: Sendable, Equatable {
        /// A whole head (start line and fields, without the final CRLFCRLF; every line end was
        /// checked to be CRLF). Call `expectBody` before `next()` again.
        case head(ArraySlice<UInt8>)
        /// The body of the message whose head came last, decoded, with its trailers.
        case body([UInt8], trailers: HTTPHeaders)
    }

    /// Longest chunk-size line (size plus extensions) accepted, so that line cannot grow unbounded.
    static let maxChunkLineBytes = 4096

    private enum State: Sendable {
        case head
        /// A head was returned; its framing is not known yet.
        case awaitingFraming
        case fixedBody(remaining: Int)
        case chunkLine
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case untilClose
        case failed(HTTPParseError)
    }

    public let limits: Limits
    private var state = State.head
    private var buffer: [UInt8] = []
    /// First byte not yet consumed.
    private var readIndex = 0
    /// Where the search for a line end resumes, so a slow trickle is not rescanned (O(n²)).
    private var scanIndex = 0
    /// Bytes of the current head consumed before its start line (leading CRLFs).
    private var leadingBytes = 0
    private var body: [UInt8] = []

    public init(limits: Limits) {
        self.limits = limits
    }

    /// Appends bytes received from the peer.
    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        if readIndex == buffer.count {
            // Everything consumed (the usual case between keep-alive messages): reuse the storage.
            buffer.removeAll(keepingCapacity: buffer.capacity <= 64 * 1024)
            readIndex = 0
            scanIndex = 0
        } else if readIndex > 4096 && readIndex * 2 >= buffer.count {
            buffer.removeFirst(readIndex)
            scanIndex -= readIndex
            readIndex = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// Whether some bytes of a message not yet complete have been received.
    public var hasPartialMessage: Bool {
        switch state {
        case .head: readIndex < buffer.count || leadingBytes > 0
        case .failed: false
        default: true
        }
    }

    /// Bytes received and not yet consumed by a complete message.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// Whether the head of a message has begun arriving and is not whole yet.
    public var isReceivingHead: Bool {
        if case .head = state { hasPartialMessage } else { false }
    }

    /// Body bytes of the message now arriving decoded so far (0 before its head is whole).
    public var bodyByteCount: Int { body.count }

    /// Sets the framing of the body whose head `next()` just returned. `.none` completes the
    /// message at once (the next `next()` returns its empty body).
    public mutating func expectBody(_ framing: HTTPBodyFraming) throws(HTTPParseError) {
        guard case .awaitingFraming = state else { preconditionFailure("expectBody without a head") }
        body = []
        switch framing {
        case .none:
            state = .fixedBody(remaining: 0)
        case .length(let length):
            guard length <= limits.maxBodyBytes else {
                let error = HTTPParseError(.bodyTooLarge, "Content-Length exceeds \(limits.maxBodyBytes) bytes")
                state = .failed(error)
                throw error
            }
            body.reserveCapacity(length)
            state = .fixedBody(remaining: length)
        case .chunked:
            state = .chunkLine
        case .untilClose:
            state = .untilClose
        }
    }

    /// Makes `error` (found by the caller in a head) final, as if the decoder had found it.
    public mutating func fail(_ error: HTTPParseError) {
        state = .failed(error)
    }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() throws(HTTPParseError) -> Event? {
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    /// The peer closed: completes a body that runs until the close; nil when nothing was
    /// pending. A message cut short is an error.
    public mutating func endOfStream() throws(HTTPParseError) -> Event? {
        switch state {
        case .untilClose:
            _ = takeBody(upTo: buffer.count - readIndex)
            return completeBody(trailers: [:])
        case .head where !hasPartialMessage:
            return nil
        case .failed(let error):
            throw error
        default:
            let error = HTTPParseError(.truncated, "connection closed before the message was complete")
            state = .failed(error)
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> Event? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .awaitingFraming:
                preconditionFailure("next() after a head without expectBody")
            case .head:
                skipLeadingEmptyLines()
                if leadingBytes >= limits.maxHeadBytes { throw Self.headTooLarge() }
                guard let end = try scan(
                    from: readIndex, untilBlankLine: true, within: limits.maxHeadBytes - leadingBytes,
                    orThrow: Self.headTooLarge()
                ) else { return nil }
                let head = buffer[readIndex..<(end - 4)]
                consume(upTo: end)
                leadingBytes = 0
                state = .awaitingFraming
                return .head(head)
            case .fixedBody(let remaining):
                let taken = takeBody(upTo: remaining)
                guard taken == remaining else {
                    state = .fixedBody(remaining: remaining - taken)
                    return nil
                }
                return completeBody(trailers: [:])
            case .chunkLine:
                guard let end = try scan(
                    from: readIndex, untilBlankLine: false, within: Self.maxChunkLineBytes, orThrow: Self.chunkLineTooLong()
                ) else { return nil }
                let size = try ChunkedCoding.parseSizeLine(buffer[readIndex..<(end - 2)])
                consume(upTo: end)
                if size == 0 {
                    state = .trailers
                } else {
                    guard size <= limits.maxBodyBytes - body.count else {
                        throw HTTPParseError(.bodyTooLarge, "chunked body exceeds \(limits.maxBodyBytes) bytes")
                    }
                    state = .chunkData(remaining: size)
                }
            case .chunkData(let remaining):
                let taken = takeBody(upTo: remaining)
                guard taken == remaining else {
                    state = .chunkData(remaining: remaining - taken)
                    return nil
                }
                state = .chunkDataEnd
            case .chunkDataEnd:
                guard buffer.count - readIndex >= 2 else {
                    if readIndex < buffer.count && buffer[readIndex] != HTTPSyntax.cr { throw Self.missingChunkCRLF() }
                    return nil
                }
                guard buffer[readIndex] == HTTPSyntax.cr, buffer[readIndex + 1] == HTTPSyntax.lf else {
                    throw Self.missingChunkCRLF()
                }
                consume(upTo: readIndex + 2)
                state = .chunkLine
            case .trailers:
                guard let end = try scan(
                    from: readIndex, untilBlankLine: true, within: limits.maxHeadBytes, orThrow: Self.headTooLarge()
                ) else { return nil }
                let trailers = end - readIndex > 2 ? try HTTPFields.parse(buffer[readIndex..<(end - 4)]) : [:]
                consume(upTo: end)
                return completeBody(trailers: trailers)
            case .untilClose:
                guard body.count + buffer.count - readIndex <= limits.maxBodyBytes else {
                    throw HTTPParseError(.bodyTooLarge, "body exceeds \(limits.maxBodyBytes) bytes")
                }
                _ = takeBody(upTo: buffer.count - readIndex)
                return nil
            }
        }
    }

    /// RFC 9112 §2.2: empty lines received before the start line SHOULD be ignored. They count
    /// towards the head limit, so they cannot be sent forever.
    private mutating func skipLeadingEmptyLines() {
        while buffer.count - readIndex >= 2, buffer[readIndex] == HTTPSyntax.cr, buffer[readIndex + 1] == HTTPSyntax.lf,
              leadingBytes < limits.maxHeadBytes {
            consume(upTo: readIndex + 2)
            leadingBytes += 2
        }
    }

    /// Finds the end of a line (or of a section ending in an empty line) starting at `start`,
    /// and returns the index just past its final LF. Every LF must follow a CR and every CR
    /// must precede an LF: a bare one is an error (RFC 9112 §2.2 allows lenience; we don't).
    /// Only `within` bytes are examined, and `tooLong` is thrown when they hold no end: so the
    /// outcome never depends on how far the peer's bytes happened to run past the limit.
    private mutating func scan(
        from start: Int, untilBlankLine: Bool, within: Int, orThrow tooLong: @autoclosure () -> HTTPParseError
    ) throws(HTTPParseError) -> Int? {
        let bound = min(buffer.count, start + within)
        var index = max(scanIndex, start)
        while index < bound {
            let byte = buffer[index]
            if byte == HTTPSyntax.cr {
                guard index + 1 < bound else { break }
                guard buffer[index + 1] == HTTPSyntax.lf else { throw Self.missingCRLF() }
            } else if byte == HTTPSyntax.lf {
                guard index > start, buffer[index - 1] == HTTPSyntax.cr else { throw Self.missingCRLF() }
                if !untilBlankLine || index == start + 1
                    || (index - 3 >= start && buffer[index - 2] == HTTPSyntax.lf && buffer[index - 3] == HTTPSyntax.cr) {
                    return index + 1
                }
            }
            index += 1
        }
        scanIndex = index
        if buffer.count >= start + within { throw tooLong() }
        return nil
    }

    private mutating func consume(upTo index: Int) {
        readIndex = index
        scanIndex = index
    }

    /// Moves up to `limit` buffered bytes into the body; returns how many.
    private mutating func takeBody(upTo limit: Int) -> Int {
        let count = min(limit, buffer.count - readIndex)
        body.append(contentsOf: buffer[readIndex..<(readIndex + count)])
        consume(upTo: readIndex + count)
        return count
    }

    private mutating func completeBody(trailers: HTTPHeaders) -> Event {
        state = .head
        defer { body = [] }
        return .body(body, trailers: trailers)
    }

    private static func headTooLarge() -> HTTPParseError {
        HTTPParseError(.headersTooLarge, "header section exceeds the limit")
    }
    private static func missingCRLF() -> HTTPParseError {
        HTTPParseError(.missingCRLF, "line not terminated by CRLF")
    }
    private static func missingChunkCRLF() -> HTTPParseError {
        HTTPParseError(.missingChunkCRLF, "chunk data not followed by CRLF")
    }
    private static func chunkLineTooLong() -> HTTPParseError {
        HTTPParseError(.invalidChunkSize, "chunk size line longer than \(maxChunkLineBytes) bytes")
    }
}
