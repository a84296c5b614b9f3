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

    /// `environmentName`, parsed.
    public var environment: AppStoreEnvironment? { environmentName.flatMap(AppStoreEnvironment.init(appleName:)) }

    /// The raw `environment` / `receiptType` text, when present.
    public var environmentName: String? { payload.signedEnvironmentName }

    public var bundleId: String? { payload["bundleId"]?.stringValue }
}
