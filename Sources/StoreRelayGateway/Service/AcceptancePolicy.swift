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
        /// Nil only when `notUnderstood` says why it could not be read.
        var environment: AppStoreEnvironment?
        var bundleId: String?
        /// The `appAppleId` a V2 notification carries; nil when it carries none.
        var appAppleId: Int64?
        /// Whether `apple-id` applies at all: V2 notifications only, since V1 bodies carry
        /// no `appAppleId`, and a V2 TEST notification only when it carries one.
        var appleIdCheckable: Bool = false
        /// When Apple signed the notification (V2); nil for V1 and the few undated ones.
        var signedDate: Timestamp? = nil
        /// Why a notification Apple signed cannot be read by this build, if it cannot.
        var notUnderstood: String? = nil
    }

    var acceptedEnvironments: Set<AppStoreEnvironment>
    /// Declared apps by bundle id; empty means every bundle id is accepted.
    var apps: [String: DeclaredApp]
    var primarySharedSecret: String?
    /// How long the journal remembers an event id (`dedupe-window`). A notification signed
    /// longer ago than that may have been forgotten, so a replay of it cannot be told from a
    /// first delivery: it is quarantined as stale, never fanned out again.
    var dedupeWindow: Duration

    /// Quarantine reasons are checked in this order: not understood, staleness, environment,
    /// path, app, apple-id.
    func disposition(of facts: Facts, pathEnvironment: AppStoreEnvironment?, now: Timestamp) -> Disposition {
        guard let environment = facts.environment, facts.notUnderstood == nil else {
            return .quarantine(reason: Disposition.notUnderstoodPrefix + (facts.notUnderstood ?? "it names no environment"))
        }
        if let stale = StalenessRule(window: dedupeWindow).staleness(signed: facts.signedDate, now: now) {
            return .quarantine(reason: stale)
        }
        if !acceptedEnvironments.contains(environment) {
            return .quarantine(reason: "environment \(environment.rawValue) is not accepted (environments "
                + acceptedEnvironments.sorted().map(\.rawValue).joined(separator: " ") + ")")
        }
        if let pathEnvironment, pathEnvironment != environment {
            return .quarantine(reason: "a \(environment.rawValue) notification arrived on the path bound to \(pathEnvironment.rawValue)")
        }
        guard !apps.isEmpty else { return .accept }
        guard let bundleId = facts.bundleId, let app = apps[bundleId] else {
            return .quarantine(reason: "app \(facts.bundleId ?? "(none)") is not declared")
        }
        // SPEC: `apple-id` is checked on production V2 notifications; sandbox ones may lack it,
        // and V1 ones never carry it (checking them would quarantine every one).
        if environment == .production, facts.appleIdCheckable, let expected = app.appleId, facts.appAppleId != expected {
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
