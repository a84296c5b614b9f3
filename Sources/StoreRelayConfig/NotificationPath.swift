import StoreRelayCore

/// A POST path of the public listener, optionally bound to one environment.
public struct NotificationPath: Sendable, Hashable {
    /// The path, starting with `/`.
    public var path: String
    /// When set, notifications on this path must be of this environment or are quarantined;
    /// nil accepts every accepted environment.
    public var environment: AppStoreEnvironment?

    public init(path: String, environment: AppStoreEnvironment? = nil) {
        self.path = path
        self.environment = environment
    }
}
