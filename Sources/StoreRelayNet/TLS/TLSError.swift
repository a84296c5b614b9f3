internal import COpenSSL

/// A TLS failure, carrying OpenSSL's own reason so an operator can tell an expired
/// certificate from a wrong host name from a protocol-version mismatch.
///
/// Compare on `code`; the reason text is for people.
public struct TLSError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure; grows without breaking callers.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case configuration, handshake, certificate, io, `protocol`
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        /// A context could not be built: unreadable PEM, key not matching the certificate.
        public static let configuration = Code(.configuration)
        /// The handshake failed for a reason other than the peer's certificate.
        public static let handshake = Code(.handshake)
        /// The peer's certificate did not verify: unknown CA, wrong host name, expired.
        public static let certificate = Code(.certificate)
        /// The transport ended or failed under the TLS session.
        public static let io = Code(.io)
        /// The peer broke the TLS protocol after the handshake.
        public static let `protocol` = Code(.protocol)

        public var description: String { base.rawValue }
    }

    public var code: Code
    /// OpenSSL's reason (or ours when OpenSSL gave none).
    public var reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { "TLS \(code) error: \(reason)" }

    /// Drains this thread's OpenSSL error queue into an error, so a stale entry never
    /// surfaces in a later, unrelated call on the same thread.
    static func fromErrorQueue(_ code: Code, _ context: String) -> TLSError {
        var reasons: [String] = []
        while true {
            let packed = ERR_get_error()
            if packed == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(packed, &buffer, buffer.count)
            reasons.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
        }
        ERR_clear_error()
        let detail = reasons.isEmpty ? "" : ": " + reasons.joined(separator: "; ")
        return TLSError(code, context + detail)
    }
}
