/// Why a NATS connection or publish failed. A struct with a code (compare on it) and a
/// sentence for logs and dead letters, like `RedisError`.
public struct NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String { case connection, timeout, protocolError, refused, shutdown }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// Resolution, connect, TLS, or the connection was lost: nothing was confirmed.
        public static let connection = Code(.connection)
        /// No answer in time (the connect, or a publish's PubAck).
        public static let timeout = Code(.timeout)
        /// The server sent something the protocol does not allow, or too much of it.
        public static let protocolError = Code(.protocolError)
        /// The server refused the connection (`-ERR` before it was ready: authorization).
        public static let refused = Code(.refused)
        /// The client was shut down.
        public static let shutdown = Code(.shutdown)

        public var description: String { base.rawValue }
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
