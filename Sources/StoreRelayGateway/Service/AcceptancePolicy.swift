import StoreRelayDelivery
import StoreRelayCore

/// Decides whether a genuine notification is for this gateway, or is quarantined: stored and
/// answered 200 so Apple stops retrying, but fanned out nowhere (SPEC "Public listener").
struct AcceptancePolicy: Sendable {
    /// An app declared with `app BUNDLEID { ... }`.
    struct DeclaredApp: Sendable, Equatable {
        var appleId: Int64?
        var sharedSecret: String?
    }

    /// The facts of a verified notification that the policy looks at.
    struct Facts: Sendable, Equatable {
        var environment: AppStoreEnvironment
        var bundleId: String?
        var appAppleId: Int64?
    }

    var acceptedEnvironments: Set<AppStoreEnvironment>
    /// Declared apps by bundle id; empty means every bundle id is accepted.
    var apps: [String: DeclaredApp]
    var primarySharedSecret: String?

    /// Quarantine reasons are checked in this order: environment, path, app, apple-id.
    func disposition(of facts: Facts, pathEnvironment: AppStoreEnvironment?) -> Disposition {
        if !acceptedEnvironments.contains(facts.environment) {
            return .quarantine(reason: "environment \(facts.environment.rawValue) is not accepted (environments "
                + acceptedEnvironments.sorted().map(\.rawValue).joined(separator: " ") + ")")
        }
        if let pathEnvironment, pathEnvironment != facts.environment {
            return .quarantine(reason: "a \(facts.environment.rawValue) notification arrived on the path bound to \(pathEnvironment.rawValue)")
        }
        guard !apps.isEmpty else { return .accept }
        guard let bundleId = facts.bundleId, let app = apps[bundleId] else {
            return .quarantine(reason: "app \(facts.bundleId ?? "(none)") is not declared")
        }
        // SPEC: `apple-id` is checked on production notifications; sandbox ones may lack it.
        if facts.environment == .production, let expected = app.appleId, facts.appAppleId != expected {
            let got = facts.appAppleId.map(String.init) ?? "none"
            return .quarantine(reason: "appAppleId \(got) does not match apple-id \(expected) of \(bundleId)")
        }
        return .accept
    }

    /// The secrets a V1 notification for `bundleId` may carry as its `password`: the app's
    /// own, then the primary one.
    func sharedSecrets(forBundle bundleId: String?) -> [String] {
        var secrets: [String] = []
        if let bundleId, let secret = apps[bundleId]?.sharedSecret { secrets.append(secret) }
        if let primarySharedSecret { secrets.append(primarySharedSecret) }
        return secrets
    }
}
