/// What the parser has to say about the bytes fed so far.
public enum HTTPParserEvent: Sendable, Equatable {
    /// The head of a request carrying `Expect: 100-continue` was accepted, and its declared body
    /// is within limits: the server may now send `HTTP/1.1 100 Continue` (RFC 9110 §10.1.1).
    case continueExpected
    /// A complete request, body included.
    case request(HTTPRequest)
}

/// An HTTP/1.1 request parser (RFC 9112): `HTTPMessageDecoder` (the framing both directions
/// share) plus what a request's line and headers mean. A pure state machine with no I/O.
///
/// Feed it bytes as they arrive, in any chunking, then call `next()` until it returns nil.
/// Bytes after a complete request begin the next one (pipelining). Any error is final: the
/// same error is thrown again on every later call, and the connection must be closed after
/// answering `error.response`.
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

    public let limits: Limits
    private var decoder: HTTPMessageDecoder
    /// The request whose head is parsed and whose body is still arriving.
    private var pending: HTTPRequest?

    public init(limits: Limits = Limits()) {
        self.limits = limits
        decoder = HTTPMessageDecoder(limits: .init(maxHeadBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes))
    }

    /// Appends bytes received from the peer.
    public mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) {
        decoder.feed(bytes)
    }

    /// Whether some bytes of a request not yet complete have been received: the server's
    /// read timeout runs exactly while this is true.
    public var hasPartialRequest: Bool { decoder.hasPartialMessage }

    /// Whether a request's head has begun arriving and is not whole yet: the server's header
    /// timeout runs exactly while this is true.
    public var hasPartialHead: Bool { decoder.isReceivingHead }

    /// Whether a request's head is whole and its body is still arriving: the server's minimum
    /// body rate applies exactly while this is true.
    public var isReceivingBody: Bool { hasPartialRequest && !hasPartialHead }

    /// Body bytes of the request now arriving received so far (decoded: chunk framing does
    /// not count, so it cannot be trickled for credit).
    public var receivedBodyBytes: Int { decoder.bodyByteCount }

    /// Bytes received and not yet consumed by a complete request.
    public var bufferedByteCount: Int { decoder.bufferedByteCount }

    /// The next event, or nil when more bytes are needed.
    public mutating func next() throws(HTTPParseError) -> HTTPParserEvent? {
        while let event = try decoder.next() {
            switch event {
            case .head(let bytes):
                let head: Head
                do {
                    head = try Self.parseHead(bytes, limits: limits)
                } catch {
                    decoder.fail(error)
                    throw error
                }
                pending = head.request
                try decoder.expectBody(head.framing)
                if head.expectsContinue { return .continueExpected }
            case .body(let body, let trailers):
                guard var request = pending else { continue }
                pending = nil
                request.body = body
                request.trailers = trailers
                return .request(request)
            }
        }
        return nil
    }
}
