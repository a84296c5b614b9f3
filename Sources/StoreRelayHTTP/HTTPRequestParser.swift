/// What the parser has to say about the bytes fed so far.
public enum HTTPParserEvent: Sendable, Equatable {
    /// The head of a request carrying `Expect: 100-continue` was accepted, and its declared body
    /// is within limits: the server may now send `HTTP/1.1 100 Continue` (RFC 9110 §10.1.1).
    case continueExpected
    /// A complete request, body included.
    case request(HTTPRequest)
}

/// An HTTP/1.1 request parser (RFC 9112): a pure state machine with no I/O.
///
/// Feed it bytes as they arrive, in any chunking, then call `next()` until it returns nil.
/// Bytes after a complete request begin the next one (pipelining). Any error is final: the
/// same error is thrown again on every later call, and the connection must be closed after
/// answering `error.response`.
///
/// Limits are enforced as early as the bytes allow: the head as soon as more than
/// `maxHeaderBytes` are buffered without its end, a `Content-Length` body before any body
/// byte is read, a chunked body as soon as a chunk size would take it over the limit.
public struct HTTPRequestParser: Sendable {
    public struct Limits: Sendable, Equatable {
        /// Request line plus header fields, CRLFs included (trailers get the same allowance).
        public var maxHeaderBytes: Int
        /// Decoded body bytes.
        public var maxBodyBytes: Int

        public init(maxHeaderBytes: Int = 16 * 1024, maxBodyBytes: Int = 1024 * 1024) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    /// Longest chunk-size line (size plus extensions) accepted, so that line cannot grow unbounded.
    static let maxChunkLineBytes = 4096

    private enum State: Sendable {
        case head
        case fixedBody(remaining: Int)
        case chunkLine
        case chunkData(remaining: Int)
        case chunkDataEnd
        case trailers
        case failed(HTTPParseError)
    }

    public let limits: Limits
    private var state = State.head
    private var buffer: [UInt8] = []
    /// First byte not yet consumed.
    private var readIndex = 0
    /// Where the search for a line end resumes, so a slow trickle is not rescanned (O(n²)).
    private var scanIndex = 0
    /// Bytes of the current request's head consumed before its request line (leading CRLFs).
    private var leadingBytes = 0
    /// The request whose head is parsed and whose body is still arriving.
    private var pending: HTTPRequest?

    public init(limits: Limits = Limits()) {
        self.limits = limits
    }

    /// Appends bytes received from the peer.
    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        if readIndex == buffer.count {
            // Everything consumed (the usual case between keep-alive requests): reuse the storage.
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

    /// Whether some bytes of a request not yet complete have been received: the server's
    /// read timeout runs exactly while this is true.
    public var hasPartialRequest: Bool {
        switch state {
        case .head: readIndex < buffer.count || leadingBytes > 0
        case .failed: false
        default: true
        }
    }

    /// Bytes received and not yet consumed by a complete request.
    public var bufferedByteCount: Int { buffer.count - readIndex }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() throws(HTTPParseError) -> HTTPParserEvent? {
        do {
            return try step()
        } catch {
            state = .failed(error)
            throw error
        }
    }

    private mutating func step() throws(HTTPParseError) -> HTTPParserEvent? {
        while true {
            switch state {
            case .failed(let error):
                throw error
            case .head:
                skipLeadingEmptyLines()
                if leadingBytes >= limits.maxHeaderBytes { throw Self.headersTooLarge() }
                guard let end = try scan(
                    from: readIndex, untilBlankLine: true, within: limits.maxHeaderBytes - leadingBytes,
                    orThrow: Self.headersTooLarge()
                ) else { return nil }
                let head = try Self.parseHead(buffer[readIndex..<(end - 4)], limits: limits)
                consume(upTo: end)
                leadingBytes = 0
                pending = head.request
                switch head.framing {
                case .none:
                    return .request(complete())
                case .length(let length):
                    pending!.body.reserveCapacity(length)
                    state = .fixedBody(remaining: length)
                case .chunked:
                    state = .chunkLine
                }
                if head.expectsContinue { return .continueExpected }
            case .fixedBody(let remaining):
                let taken = takeBody(upTo: remaining)
                guard taken == remaining else {
                    state = .fixedBody(remaining: remaining - taken)
                    return nil
                }
                return .request(complete())
            case .chunkLine:
                guard let end = try scan(
                    from: readIndex, untilBlankLine: false, within: Self.maxChunkLineBytes, orThrow: Self.chunkLineTooLong()
                ) else { return nil }
                let size = try Self.parseChunkLine(buffer[readIndex..<(end - 2)])
                consume(upTo: end)
                if size == 0 {
                    state = .trailers
                } else {
                    guard size <= limits.maxBodyBytes - pending!.body.count else {
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
                    from: readIndex, untilBlankLine: true, within: limits.maxHeaderBytes, orThrow: Self.headersTooLarge()
                ) else { return nil }
                if end - readIndex > 2 {
                    pending!.trailers = try Self.parseFields(buffer[readIndex..<(end - 4)])
                }
                consume(upTo: end)
                return .request(complete())
            }
        }
    }

    /// RFC 9112 §2.2: a server SHOULD ignore empty lines received before the request line.
    /// They count towards the head limit, so they cannot be sent forever.
    private mutating func skipLeadingEmptyLines() {
        while buffer.count - readIndex >= 2, buffer[readIndex] == HTTPSyntax.cr, buffer[readIndex + 1] == HTTPSyntax.lf,
              leadingBytes < limits.maxHeaderBytes {
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

    /// Moves up to `limit` buffered bytes into the pending body; returns how many.
    private mutating func takeBody(upTo limit: Int) -> Int {
        let count = min(limit, buffer.count - readIndex)
        pending!.body.append(contentsOf: buffer[readIndex..<(readIndex + count)])
        consume(upTo: readIndex + count)
        return count
    }

    private mutating func complete() -> HTTPRequest {
        state = .head
        defer { pending = nil }
        return pending!
    }

    private static func headersTooLarge() -> HTTPParseError {
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
