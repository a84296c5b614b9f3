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
    /// `true` for a nested JWS whose header is the notification's and whose own signature was
    /// therefore not checked (`NestedSignatureCheck.chainEquality`): it is proven Apple's by
    /// the notification's signature, which covers its bytes, not by its own.
    public let coveredByOuterSignature: Bool

    init(decoded: DecodedJWS, effectiveDate: Timestamp?, signatureVerified: Bool, coveredByOuterSignature: Bool = false) {
        payload = decoded.payload
        header = decoded.header
        self.effectiveDate = effectiveDate
        self.signatureVerified = signatureVerified
        self.coveredByOuterSignature = coveredByOuterSignature
    }

    /// `environmentName`, parsed.
    public var environment: AppStoreEnvironment? { environmentName.flatMap(AppStoreEnvironment.init(appleName:)) }

    /// The raw `environment` / `receiptType` text, when present.
    public var environmentName: String? { payload.signedEnvironmentName }

    public var bundleId: String? { payload["bundleId"]?.stringValue }
}
