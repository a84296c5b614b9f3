#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why an outbound connection ended before its protocol closed it. Compare on `code`; the
/// fields behind it let each protocol client word the failure in its own error type (an HTTP
/// client tells a TLS failure from an I/O one, a Redis client says the server is unavailable).
/// `message` is one sentence naming the peer, for a client that needs no more.
public struct OutboundError: Error, Sendable, CustomStringConvertible {
    public enum Code: Sendable, Hashable {
        /// The host name did not resolve (`resolverError` says why).
        case resolution
        /// Every resolved address refused the connection or was unreachable.
        case connect
        /// The TLS context or engine could not be set up (an unreadable CA, certificate or key).
        case tlsSetup
        /// The TLS handshake failed, or the socket under it, or the peer closed during it.
        case handshake
        /// The socket or the TLS record layer failed once established.
        case io
    }

    public let code: Code
    public let message: String
    /// What the resolver threw, for `.resolution`.
    public let resolverError: (any Error)?
    /// The `errno` of the failing call, when there was one.
    public let errno: Int32?
    /// The TLS layer's reason, when TLS itself failed (a certificate, an alert, a bad record).
    public let tlsReason: String?
    /// OpenSSL's verdict behind `tlsReason`, or the setup failure behind `.tlsSetup`.
    public let tlsError: TLSError?
    /// The peer closed the connection (during the handshake: `.handshake`).
    public let endOfStream: Bool
    /// The failure happened while sending (else while reading or connecting).
    public let whileSending: Bool

    init(
        _ code: Code, _ message: String, resolverError: (any Error)? = nil, errno: Int32? = nil, tlsReason: String? = nil,
        tlsError: TLSError? = nil, endOfStream: Bool = false, whileSending: Bool = false
    ) {
        self.code = code
        self.message = message
        self.resolverError = resolverError
        self.errno = errno
        self.tlsReason = tlsReason
        self.tlsError = tlsError
        self.endOfStream = endOfStream
        self.whileSending = whileSending
    }

    /// The cause alone, without the peer: TLS's reason, the peer's close, or the system's word
    /// for `errno`.
    public var reason: String {
        if let tlsReason { return tlsReason }
        if endOfStream { return "closed by the peer" }
        if let errno { return String(cString: strerror(errno)) }
        return message
    }

    public var description: String { message }
}
