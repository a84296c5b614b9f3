
/// Why a request failed. Compare on `code`; the message (and the TLS error, when there is one)
/// says what happened for the logs and the dead-letter record.
public struct HTTPClientError: Error, Sendable, CustomStringConvertible {
    /// What kind of failure; grows without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case invalidRequest, resolution, connect, connectTimeout, timeout, tls, io
            case `protocol`, responseTooLarge, shutdown
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// The URL or a header cannot be sent as given; retrying will not help.
        public static let invalidRequest = Code(.invalidRequest)
        /// The host name did not resolve.
        public static let resolution = Code(.resolution)
        /// Every address refused the connection or was unreachable.
        public static let connect = Code(.connect)
        /// The connection (TCP and TLS handshake) was not established within the connect timeout.
        public static let connectTimeout = Code(.connectTimeout)
        /// The whole request did not finish within its overall timeout.
        public static let timeout = Code(.timeout)
        /// The TLS handshake failed, including certificate and host name verification.
        public static let tls = Code(.tls)
        /// The connection was reset or closed before the response was complete.
        public static let io = Code(.io)
        /// The server's response is not valid HTTP/1.1.
        public static let `protocol` = Code(.protocol)
        /// The response body is larger than the configured cap.
        public static let responseTooLarge = Code(.responseTooLarge)
        /// The client was shut down before the request finished.
        public static let shutdown = Code(.shutdown)

        public var description: String { base.rawValue }
    }

    public var code: Code
    public var message: String
    /// The TLS failure behind a `.tls` (or TLS-level `.io`) error.
    public var tlsError: TLSError?
    /// The `errno` behind a socket failure, when there is one.
    public var errno: Int32?

    public init(_ code: Code, _ message: String, tlsError: TLSError? = nil, errno: Int32? = nil) {
        self.code = code
        self.message = message
        self.tlsError = tlsError
        self.errno = errno
    }

    public var description: String { "\(code): \(message)" }
}
