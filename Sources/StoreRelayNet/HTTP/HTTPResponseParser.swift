/// Parses one HTTP/1.1 response from bytes as they arrive (RFC 9112), for the HTTP client:
/// `HTTPMessageDecoder` for the framing (the codec the server's request parser uses too), plus
/// what a status line and a response's headers mean. A pure state machine: no I/O, the same
/// result for any split of the input. Any error is final.
public struct HTTPResponseParser: Sendable {
    public struct Limits: Sendable {
        public var maxHeaderBytes: Int
        public var maxBodyBytes: Int

        public init(maxHeaderBytes: Int = 64 * 1024, maxBodyBytes: Int = 8 * 1024 * 1024) {
            self.maxHeaderBytes = maxHeaderBytes
            self.maxBodyBytes = maxBodyBytes
        }
    }

    public enum Outcome: Sendable {
        case needMore
        /// `reusable`: the connection may carry another request (keep-alive, nothing left over).
        case complete(HTTPResponse, reusable: Bool)
    }

    private struct Head: Sendable {
        var response: HTTPResponse
        var framing: HTTPBodyFraming
        var keepAlive: Bool
    }

    private var decoder: HTTPMessageDecoder
    private let isHeadRequest: Bool
    /// The final response whose body is arriving; nil while none (or only a 1xx) was read.
    private var head: Head?
    /// True once any byte arrived: a connection closed before that is a "stale keep-alive".
    public private(set) var hasReceivedBytes = false

    public init(limits: Limits = Limits(), isHeadRequest: Bool = false) {
        decoder = HTTPMessageDecoder(limits: .init(maxHeadBytes: limits.maxHeaderBytes, maxBodyBytes: limits.maxBodyBytes))
        self.isHeadRequest = isHeadRequest
    }

    public mutating func consume(_ bytes: some Collection<UInt8>) throws(HTTPParseError) -> Outcome {
        if !bytes.isEmpty { hasReceivedBytes = true }
        decoder.feed(bytes)
        while let event = try decoder.next() {
            if let response = try handle(event) {
                // Bytes after the response were never asked for: do not reuse the connection.
                return .complete(response, reusable: head?.keepAlive == true && decoder.bufferedByteCount == 0)
            }
        }
        return .needMore
    }

    /// The connection ended: completes a read-until-close body, else throws `.truncated`.
    public mutating func endOfStream() throws(HTTPParseError) -> HTTPResponse {
        if let event = try decoder.endOfStream(), let response = try handle(event) { return response }
        let error = HTTPParseError(.truncated, "connection closed before any response")
        decoder.fail(error)
        throw error
    }

    /// The whole response once `event` completes it.
    private mutating func handle(_ event: HTTPMessageDecoder.Event) throws(HTTPParseError) -> HTTPResponse? {
        switch event {
        case .head(let bytes):
            let parsed: Head?
            do {
                parsed = try Self.parseHead(bytes, isHeadRequest: isHeadRequest)
            } catch {
                decoder.fail(error)
                throw error
            }
            head = parsed
            // An interim 1xx has no body; the real response follows it.
            try decoder.expectBody(parsed?.framing ?? .none)
            return nil
        case .body(let body, _):
            guard var response = head?.response else { return nil }
            response.body = body
            return response
        }
    }

    /// The head without its final CRLFCRLF; nil for an interim (1xx) response.
    private static func parseHead(_ bytes: ArraySlice<UInt8>, isHeadRequest: Bool) throws(HTTPParseError) -> Head? {
        let lineEnd = bytes.firstIndex(of: UInt8(ascii: "\r")) ?? bytes.endIndex
        let fields = try HTTPFields.parse(lineEnd < bytes.endIndex ? bytes[(lineEnd + 2)...] : bytes[bytes.endIndex...])
        let statusLine = try StatusLine(bytes[bytes.startIndex..<lineEnd])
        if (100..<200).contains(statusLine.status) {
            guard statusLine.status != 101 else { throw HTTPParseError(.invalidStatusLine, "unexpected protocol switch") }
            return nil
        }
        // HTTP/1.1 persists unless told to close; HTTP/1.0 only when asked (RFC 9112 §9.3).
        var keepAlive = statusLine.isHTTP11
            ? !fields.containsToken("close", in: "Connection")
            : fields.containsToken("keep-alive", in: "Connection")
        let framing: HTTPBodyFraming
        let codings = fields.values(for: "Transfer-Encoding").flatMap(HTTPSyntax.lowercasedListMembers)
        if isHeadRequest || statusLine.status == 204 || statusLine.status == 304 {
            framing = .none
        } else if !codings.isEmpty {
            // Transfer-Encoding overrides Content-Length (RFC 9112 §6.3 rule 3); a response
            // whose last coding is not chunked runs until the server closes.
            framing = codings.last == "chunked" ? .chunked : .untilClose
        } else if fields.contains("Content-Length") {
            framing = .length(try HTTPFields.contentLength(fields.values(for: "Content-Length")))
        } else {
            framing = .untilClose
        }
        if framing == .untilClose { keepAlive = false }
        let response = HTTPResponse(status: statusLine.status, reason: statusLine.reason, headers: fields)
        return Head(response: response, framing: framing, keepAlive: keepAlive)
    }
}

/// `HTTP-version SP status-code SP [ reason-phrase ]` (RFC 9112 §4).
private struct StatusLine {
    var status: Int
    var reason: String
    var isHTTP11: Bool

    init(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) {
        let parts = bytes.split(separator: UInt8(ascii: " "), maxSplits: 2, omittingEmptySubsequences: false)
        let version = parts.first.map { String(decoding: $0, as: UTF8.self) }
        guard parts.count >= 2, version == "HTTP/1.1" || version == "HTTP/1.0",
              parts[1].count == 3, parts[1].allSatisfy(HTTPSyntax.isDigit),
              let status = Int(String(decoding: parts[1], as: UTF8.self)), status >= 100
        else { throw HTTPParseError(.invalidStatusLine, "bad status line \(String(decoding: bytes.prefix(60), as: UTF8.self))") }
        self.status = status
        reason = parts.count == 3 ? String(decoding: parts[2], as: UTF8.self) : ""
        isHTTP11 = version == "HTTP/1.1"
    }
}
