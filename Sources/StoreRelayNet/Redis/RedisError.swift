/// Why a Redis command got no reply. An error *reply* (`-ERR ...`) is not one of these: it is
/// a `RESPValue.error` the caller reads. Compare on `code`.
public struct RedisError: Error, Sendable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case unavailable, timeout, protocolError, replyTooLarge, refused, shutdown
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
        /// The server sent a reply over the client's bound (`RedisConfiguration.replyLimits`:
        /// 64 MiB in all by default); the connection was dropped rather than the reply buffered.
        public static let replyTooLarge = Code(.replyTooLarge)
        /// The server answered the connection's greeting with a refusal: bad credentials, no
        /// such database, or a check the client was configured with (e.g. durability).
        public static let refused = Code(.refused)
        /// The client was shut down.
        public static let shutdown = Code(.shutdown)

        public var description: String { base.rawValue }
    }

    public let code: Code
    /// One sentence for the operator; never holds a password, and never more than
    /// `maximumMessageBytes` (it may quote what the server said, and a server may say anything).
    public let message: String

    public static let maximumMessageBytes = 512

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message.utf8.count <= Self.maximumMessageBytes ? message
            : String(decoding: message.utf8.prefix(Self.maximumMessageBytes), as: UTF8.self) + "… (\(message.utf8.count) bytes in all)"
    }

    public var description: String { message }
}
