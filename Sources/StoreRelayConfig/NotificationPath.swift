import StoreRelayCore

/// A POST path of the public listener, optionally bound to one environment.
public struct NotificationPath: Sendable, Hashable {
    /// The path, starting with `/`.
    public var path: String
    /// When set, notifications on this path must be of this environment or are quarantined;
    /// nil accepts every accepted environment.
    public var environment: AppStoreEnvironment?
    /// Whose notifications the path takes: Apple's (the default) or Google Play's Pub/Sub
    /// pushes (`path PATH play`).
    public var kind: Kind = .appStore

    /// The store a path takes notifications from.
    public enum Kind: String, Sendable, Hashable {
        case appStore = "appstore"
        case googlePlay = "play"
    }

    public init(path: String, environment: AppStoreEnvironment? = nil, kind: Kind = .appStore) {
        self.path = path
        self.environment = environment
        self.kind = kind
    }
}
