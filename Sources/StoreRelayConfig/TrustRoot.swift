public import StoreRelayCore

/// One `trust-root` line: a PEM file of extra roots, and the environments whose data they may
/// vouch for. Apple Root CA - G3 is built in and trusted everywhere; an extra root is most
/// often a dev or test CA, which should not be able to sign production notifications.
public struct TrustRoot: Sendable, Hashable, CustomStringConvertible {
    public var path: String
    /// The environments named on the line; `nil` when none are, meaning every environment
    /// (the contract's original `trust-root FILE`), which `check` warns about for production.
    public var environments: [AppStoreEnvironment]?

    public init(path: String, environments: [AppStoreEnvironment]? = nil) {
        self.path = path
        self.environments = environments
    }

    public var description: String {
        guard let environments else { return path }
        return "\(path) (\(environments.map(\.rawValue).joined(separator: ", ")) only)"
    }
}
