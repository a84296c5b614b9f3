public import StoreRelayCore

/// An App Store Server Notification V2 whose signature, chain and nested signed data were
/// verified, with the facts StoreRelay routes and normalizes on.
public struct VerifiedNotification: Sendable {
    /// The decoded outer payload, every field as Apple sent it.
    public let payload: JSONValue
    public let notificationType: String
    public let subtype: String?
    public let notificationUUID: String
    /// `version`, normally "2.0".
    public let version: String?
    /// The outer `signedDate`; `nil` for the few old notifications that have none.
    public let signedDate: Timestamp?
    /// From `data`, `summary`, `externalPurchaseToken` or `appData`.
    public let environment: AppStoreEnvironment
    public let bundleId: String?
    public let appAppleId: Int64?
    public let bundleVersion: String?
    /// `data.signedTransactionInfo`, verified at its own `signedDate` and decoded.
    public let transaction: VerifiedSignedData?
    /// `data.signedRenewalInfo`, verified and decoded.
    public let renewal: VerifiedSignedData?
    /// `signedAppTransactionInfo` (in `appData` or `data`), verified and decoded.
    public let appTransaction: VerifiedSignedData?
    /// `false` only when accepted unchecked because `environment` is configured as
    /// unverified (Xcode / LocalTesting); downstreams should know.
    public let signatureVerified: Bool

    /// `data`, when present.
    public var data: JSONObject? { payload["data"]?.objectValue }
    /// `summary` (RENEWAL_EXTENSION / SUMMARY), when present.
    public var summary: JSONObject? { payload["summary"]?.objectValue }
    /// `externalPurchaseToken` (EXTERNAL_PURCHASE_TOKEN), when present.
    public var externalPurchaseToken: JSONObject? { payload["externalPurchaseToken"]?.objectValue }
    /// `appData` (e.g. RESCIND_CONSENT), when present.
    public var appData: JSONObject? { payload["appData"]?.objectValue }
}

/// What verifying a notification found: one StoreRelay reads, or one Apple signed that it
/// does not understand.
public enum NotificationReading: Sendable {
    case readable(VerifiedNotification)
    case unreadable(UnreadableNotification)
}

/// A notification whose outer signature and chain are proven to be Apple's, but whose content
/// StoreRelay cannot read: a container or environment name newer than this build, nested
/// signed data that does not verify or belongs to another app or environment. The gateway
/// keeps it (quarantined) rather than refuse it, because a refusal would lose it once Apple
/// stops retrying.
public struct UnreadableNotification: Sendable {
    /// The decoded outer payload, every field as Apple sent it.
    public let payload: JSONObject
    /// The environment, when the payload names one StoreRelay knows.
    public let environment: AppStoreEnvironment?
    /// The outer `signedDate`.
    public let signedDate: Timestamp?
    public let signatureVerified: Bool
    /// What could not be read, as `verify(signedPayload:)` reports it.
    public let error: VerificationError
}

/// Where a notification says which app and environment it is for.
struct NotificationSubject {
    var environment: AppStoreEnvironment
    var environmentName: String
    var bundleId: String?
    var appAppleId: Int64?
    var bundleVersion: String?

    /// Reads the first of `data`, `summary`, `externalPurchaseToken`, `appData`, the order
    /// Apple's libraries use.
    static func read(_ payload: JSONObject) throws(VerificationError) -> NotificationSubject {
        let container: JSONObject
        let name: String?
        if let data = payload["data"]?.objectValue {
            container = data
            name = data["environment"]?.stringValue
        } else if let summary = payload["summary"]?.objectValue {
            container = summary
            name = summary["environment"]?.stringValue
        } else if let token = payload["externalPurchaseToken"]?.objectValue {
            container = token
            // Apple marks sandbox tokens only by this prefix of their id.
            name = token["externalPurchaseId"]?.stringValue.map { $0.hasPrefix("SANDBOX") ? "Sandbox" : "Production" }
        } else if let appData = payload["appData"]?.objectValue {
            container = appData
            name = appData["environment"]?.stringValue
        } else {
            throw .malformed(.notNotification, "the notification has none of data, summary, externalPurchaseToken or appData")
        }
        guard let name else {
            throw .malformed(.notNotification, "the notification does not name its environment")
        }
        guard let environment = AppStoreEnvironment(appleName: name) else {
            throw .malformed(.notNotification, "the notification names an unknown environment \"\(name.prefix(40))\"")
        }
        return NotificationSubject(
            environment: environment, environmentName: name,
            bundleId: container["bundleId"]?.stringValue,
            appAppleId: container["appAppleId"]?.int64Value,
            bundleVersion: container["bundleVersion"]?.stringValue
        )
    }
}
