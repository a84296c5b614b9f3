public import StoreRelayCore

/// One verified (or, for an allowed unverified environment, only decoded) App Store JWS.
public struct VerifiedSignedData: Sendable {
    /// The decoded payload: every field as Apple sent it.
    public let payload: JSONObject
    /// The JWS header (`alg`, `x5c`).
    public let header: JSONObject
    /// The instant it was verified at, when the payload names one: its `signedDate`, or an
    /// app transaction's `receiptCreationDate` (see `DecodedJWS.effectiveDate()`).
    public let effectiveDate: Timestamp?
    /// `false` only when accepted unchecked through `unverifiedEnvironments`.
    public let signatureVerified: Bool

    init(decoded: DecodedJWS, effectiveDate: Timestamp?, signatureVerified: Bool) {
        payload = decoded.payload
        header = decoded.header
        self.effectiveDate = effectiveDate
        self.signatureVerified = signatureVerified
    }

    /// `environment` (or `receiptType` for app transactions), parsed.
    public var environment: AppStoreEnvironment? {
        (payload["environment"]?.stringValue ?? payload["receiptType"]?.stringValue).flatMap(AppStoreEnvironment.init(appleName:))
    }

    /// The raw `environment` / `receiptType` text, when present.
    public var environmentName: String? { payload["environment"]?.stringValue ?? payload["receiptType"]?.stringValue }

    public var bundleId: String? { payload["bundleId"]?.stringValue }
}
