internal import COpenSSL

/// An error from the OpenSSL layer: what we tried (`code`), and why OpenSSL refused
/// (`reason`, taken from the OpenSSL error queue or the X.509 verification error string).
///
/// Shaped like swift-certificates' errors: the code is a struct over a private enum so new
/// codes can be added without breaking callers, who compare on `code`.
public struct CryptoError: Error, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: Hashable, Sendable {
            case invalidCertificate, invalidKey, unsupportedKey, invalidSignature
            case untrustedChain, certificateExpired, certificateNotYetValid, internalFailure
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// The bytes are not a DER or PEM certificate.
        public static let invalidCertificate = Code(.invalidCertificate)
        /// The bytes are not a key of the expected encoding.
        public static let invalidKey = Code(.invalidKey)
        /// A well-formed key of the wrong type or curve (ES256 needs EC P-256).
        public static let unsupportedKey = Code(.unsupportedKey)
        /// A signature that is not well-formed (verification failures return `false` instead).
        public static let invalidSignature = Code(.invalidSignature)
        /// The chain does not lead to a trusted root, or a signature in it is wrong.
        public static let untrustedChain = Code(.untrustedChain)
        /// A certificate in the chain had expired at the validation time.
        public static let certificateExpired = Code(.certificateExpired)
        /// A certificate in the chain was not yet valid at the validation time.
        public static let certificateNotYetValid = Code(.certificateNotYetValid)
        /// OpenSSL failed where it should not (allocation, internal error).
        public static let internalFailure = Code(.internalFailure)

        public var description: String { "\(backing)" }
    }

    public let code: Code
    /// A sentence saying what failed, including OpenSSL's reason where there is one.
    public let reason: String

    public init(_ code: Code, _ reason: String) {
        self.code = code
        self.reason = reason
    }

    public var description: String { reason }

    /// Builds an error from the OpenSSL error queue (and empties it), so a stale entry never
    /// surfaces in a later, unrelated call on this thread.
    package static func fromQueue(_ code: Code, _ what: String) -> CryptoError {
        let detail = OpenSSLErrorQueue.drain()
        return CryptoError(code, detail.isEmpty ? what : "\(what): \(detail)")
    }
}

/// The per-thread OpenSSL error queue, for every module that calls OpenSSL for keys and
/// certificates (the simulator too): read where a call fails, so the reason lands in the error.
public enum OpenSSLErrorQueue {
    /// Reads every queued error (the first four as "reason (library)" strings joined by "; ")
    /// and clears the queue.
    public static func drain() -> String {
        var parts: [String] = []
        while true {
            let error = ERR_get_error()
            if error == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(error, &buffer, buffer.count)
            let text = buffer.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            if parts.count < 4 { parts.append(text) }
        }
        return parts.joined(separator: "; ")
    }

    /// Forgets queued errors after an expected failure (a wrong signature, an unparseable input).
    public static func clear() { ERR_clear_error() }
}
