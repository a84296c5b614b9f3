/// A declared app (`app BUNDLEID { ... }`). Once any app is declared, other bundle ids are
/// quarantined.
public struct AppConfiguration: Sendable, Hashable {
    /// The bundle id, e.g. `com.acme.journal`.
    public var bundleId: String
    /// The app's Apple id, which production V2 notifications must carry; nil: not checked.
    public var appleId: UInt64?
    /// The app-specific shared secret that V1 notifications may carry in `password`.
    public var sharedSecret: ConfigSecret?
    /// The In-App Purchase key for the App Store Server API (reconciliation, probes).
    public var apiKey: APIKeyFile?
    /// When set, the gateway pulls Notification History on this schedule (needs `apiKey`).
    public var reconcile: ReconcileSchedule?

    public init(bundleId: String, appleId: UInt64? = nil, sharedSecret: ConfigSecret? = nil) {
        self.bundleId = bundleId
        self.appleId = appleId
        self.sharedSecret = sharedSecret
    }
}

