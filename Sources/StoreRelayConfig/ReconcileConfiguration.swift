/// `api-key FILE KEY-ID ISSUER-ID` in an app block: the In-App Purchase key (a `.p8` file
/// from App Store Connect) that signs the App Store Server API tokens of that app.
public struct APIKeyFile: Sendable, Hashable {
    /// The `.p8` file: PKCS#8 PEM of a P-256 private key.
    public var path: String
    /// The key's id in App Store Connect (10 characters), the token's `kid`.
    public var keyId: String
    /// The team's issuer id (a UUID), the token's `iss`.
    public var issuerId: String

    public init(path: String, keyId: String, issuerId: String) {
        self.path = path
        self.keyId = keyId
        self.issuerId = issuerId
    }
}

/// `reconcile every DURATION overlap DURATION` in an app block: how often to pull Apple's
/// Notification History, and how far before the last checkpoint each pass looks again.
public struct ReconcileSchedule: Sendable, Hashable {
    public var every: Duration
    public var overlap: Duration

    public init(every: Duration, overlap: Duration) {
        self.every = every
        self.overlap = overlap
    }
}

