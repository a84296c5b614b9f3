#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why the server could not start listening (or load its TLS files). Compare on `code`; `errno` and `detail` are
/// context for the one-sentence message an operator sees.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Backing: String, Sendable, Hashable {
            case invalidAddress, resolutionFailed, socketFailed, bindFailed, listenFailed, alreadyStarted, tlsSetupFailed
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }
        public var description: String { backing.rawValue }

        /// The address is not `host:port` with a port in 0...65535.
        public static let invalidAddress = Code(.invalidAddress)
        /// The host did not resolve to an IPv4 or IPv6 address.
        public static let resolutionFailed = Code(.resolutionFailed)
        public static let socketFailed = Code(.socketFailed)
        /// Typically EADDRINUSE or EACCES.
        public static let bindFailed = Code(.bindFailed)
        public static let listenFailed = Code(.listenFailed)
        /// `start()` was called twice, or after `shutdown`.
        public static let alreadyStarted = Code(.alreadyStarted)
        /// `HTTPServerTLS`: a certificate or key file is unreadable, not PEM, or the key does
        /// not match the certificate.
        public static let tlsSetupFailed = Code(.tlsSetupFailed)
    }

    public let code: Code
    /// The `errno` of the failing call, when there was one.
    public let errno: Int32?
    public let detail: String

    init(_ code: Code, _ detail: String, errno: Int32? = nil) {
        self.code = code
        self.detail = detail
        self.errno = errno
    }

    public var description: String {
        guard let errno else { return detail }
        return detail + ": " + String(cString: strerror(errno))
    }

    public static func == (lhs: HTTPServerError, rhs: HTTPServerError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
