/// Why the HTTP/1 decoder (a request on the server, a response in the client) refused the
/// bytes it was given.
///
/// Shaped like swift-certificates' errors: a struct whose `code` is compared, with a private
/// backing enum so new codes never break callers, plus a human `detail` for logs. Every error
/// is final for the connection: the server answers `response` with `Connection: close`.
public struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Backing: String, Sendable, Hashable {
            case invalidRequestLine, invalidMethod, invalidTarget, invalidVersion
            case invalidHeaderName, invalidHeaderValue, obsoleteLineFolding, missingCRLF
            case missingHost, multipleHosts
            case invalidContentLength, conflictingContentLength, contentLengthWithTransferEncoding
            case unsupportedTransferEncoding, invalidChunkSize, invalidChunkExtension, missingChunkCRLF
            case headersTooLarge, bodyTooLarge
            case invalidStatusLine, truncated
        }

        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        public var description: String { backing.rawValue }

        public static let invalidRequestLine = Code(.invalidRequestLine)
        public static let invalidMethod = Code(.invalidMethod)
        public static let invalidTarget = Code(.invalidTarget)
        /// Not `HTTP/1.0` or `HTTP/1.1`.
        public static let invalidVersion = Code(.invalidVersion)
        public static let invalidHeaderName = Code(.invalidHeaderName)
        public static let invalidHeaderValue = Code(.invalidHeaderValue)
        /// A header line starting with whitespace (RFC 9112 §5.2: reject).
        public static let obsoleteLineFolding = Code(.obsoleteLineFolding)
        /// A bare LF or a CR not followed by LF where a line must end.
        public static let missingCRLF = Code(.missingCRLF)
        /// HTTP/1.1 requires exactly one `Host` (RFC 9112 §3.2).
        public static let missingHost = Code(.missingHost)
        public static let multipleHosts = Code(.multipleHosts)
        public static let invalidContentLength = Code(.invalidContentLength)
        public static let conflictingContentLength = Code(.conflictingContentLength)
        /// Both framings at once: the classic request-smuggling vector (RFC 9112 §6.1).
        public static let contentLengthWithTransferEncoding = Code(.contentLengthWithTransferEncoding)
        /// Anything but exactly `chunked`, or any `Transfer-Encoding` on HTTP/1.0.
        public static let unsupportedTransferEncoding = Code(.unsupportedTransferEncoding)
        public static let invalidChunkSize = Code(.invalidChunkSize)
        public static let invalidChunkExtension = Code(.invalidChunkExtension)
        public static let missingChunkCRLF = Code(.missingChunkCRLF)
        /// Request line plus headers (or trailers) over `maxHeaderBytes`: 431.
        public static let headersTooLarge = Code(.headersTooLarge)
        /// Body over `maxBodyBytes`: 413.
        public static let bodyTooLarge = Code(.bodyTooLarge)
        /// A response's status line is not `HTTP/1.x NNN reason`.
        public static let invalidStatusLine = Code(.invalidStatusLine)
        /// The connection closed before the message was complete.
        public static let truncated = Code(.truncated)
    }

    public let code: Code
    /// What exactly was wrong, for logs; never sent to the client.
    public let detail: String

    package init(_ code: Code, _ detail: String) {
        self.code = code
        self.detail = detail
    }

    public var description: String { "\(code): \(detail)" }

    /// The error code and status to answer with: 431, 413, or 400 for everything else.
    public var errorCode: HTTPErrorCode {
        switch code {
        case .headersTooLarge: .headersTooLarge
        case .bodyTooLarge: .tooLarge
        default: .malformed
        }
    }

    /// The response the server sends before closing the connection.
    public var response: HTTPResponse { .error(errorCode) }

    public static func == (lhs: HTTPParseError, rhs: HTTPParseError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
