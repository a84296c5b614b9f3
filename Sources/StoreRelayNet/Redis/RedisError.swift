/// Why a Redis command got no reply. An error *reply* (`-ERR ...`) is not one of these: it is
/// a `RESPValue.error` the caller reads. Compare on `code`.
public struct RedisError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unavailable, timeout, protocolError, refused, shutdown
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// No usable connection: connecting, reconnecting after a failure, or the server
        /// closed it with the command unanswered.
        public static let unavailable = Code(.unavailable)
        /// No reply within the command timeout; the connection was dropped (replies come in
        /// order, so a late one cannot be skipped).
        public static let timeout = Code(.timeout)
        /// The server's bytes are not RESP2; the connection was dropped.
        public static let protocolError = Code(.protocolError)
        /// The server answered the connection's greeting with a refusal: bad credentials, no
        /// such database, or a check the client was configured with (e.g. durability).
        public static let refused = Code(.refused)
        /// The client was shut down.
        public static let shutdown = Code(.shutdown)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence for the operator; never holds a password.
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
