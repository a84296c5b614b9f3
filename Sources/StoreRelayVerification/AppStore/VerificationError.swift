/// Why a notification or signed App Store data was refused.
///
/// `code` is what the public listener answers (400 `malformed` or 401 `signature`); `reason`
/// is the precise rule that failed, for logs, metrics and tests; `message` is one sentence
/// for the response body and for `storerelay verify`. Both are structs over private enums
/// so new cases never break callers, who compare on them.
public struct VerificationError: Error, Hashable, CustomStringConvertible {
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: Hashable, Sendable { case malformed, signature }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// Not a JWS, bad base64 or JSON, not a notification: HTTP 400.
        public static let malformed = Code(.malformed)
        /// Well-formed but not proven to be Apple's: HTTP 401.
        public static let signature = Code(.signature)

        /// The HTTP status the public listener answers with.
        public var httpStatus: Int { backing == .malformed ? 400 : 401 }
        /// The `error` field of the response body: `malformed` or `signature`.
        public var description: String { backing == .malformed ? "malformed" : "signature" }
    }

    public struct Reason: Hashable, Sendable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        // .malformed
        public static let notJWS = Reason("notJWS")
        public static let invalidBase64 = Reason("invalidBase64")
        public static let invalidJSON = Reason("invalidJSON")
        public static let notNotification = Reason("notNotification")
        // .signature
        public static let unsupportedAlgorithm = Reason("unsupportedAlgorithm")
        public static let invalidChainLength = Reason("invalidChainLength")
        public static let invalidCertificate = Reason("invalidCertificate")
        public static let missingAppleOID = Reason("missingAppleOID")
        public static let untrustedChain = Reason("untrustedChain")
        public static let certificateExpired = Reason("certificateExpired")
        public static let invalidSignature = Reason("invalidSignature")
        public static let nestedMismatch = Reason("nestedMismatch")

        public var description: String { name }
    }

    public let code: Code
    public let reason: Reason
    /// One sentence, no secrets, safe to send back to the caller.
    public let message: String

    public init(_ code: Code, _ reason: Reason, _ message: String) {
        self.code = code
        self.reason = reason
        self.message = message
    }

    static func malformed(_ reason: Reason, _ message: String) -> VerificationError {
        VerificationError(.malformed, reason, message)
    }

    static func signature(_ reason: Reason, _ message: String) -> VerificationError {
        VerificationError(.signature, reason, message)
    }

    /// Prefixes the message with where the failure was, e.g. "signedTransactionInfo: ...".
    func within(_ field: String) -> VerificationError {
        VerificationError(code, reason, "\(field): \(message)")
    }

    public var description: String { "\(code) (\(reason)): \(message)" }
}
