import StoreRelayCore

/// What V2 verification produced, as plain decoded JSON: the input of `NormalizedEvent`.
///
/// The verifier owns signatures and certificates; this module only reshapes what it decoded,
/// so it takes JSON rather than the verifier's types and the two can evolve separately.
public struct NotificationContent: Sendable, Hashable {
    /// The decoded outer payload (responseBodyV2DecodedPayload): `notificationType`,
    /// `subtype`, `notificationUUID`, `version`, `signedDate` and one of `data`, `summary`,
    /// `externalPurchaseToken` or `appData`, plus whatever Apple adds later.
    public var payload: JSONObject
    /// The decoded, already verified `data.signedTransactionInfo`, when there is one.
    public var transaction: JSONValue?
    /// The decoded, already verified `data.signedRenewalInfo`, when there is one.
    public var renewal: JSONValue?
    /// The decoded, already verified `appData.signedAppTransactionInfo`, when there is one.
    public var appTransaction: JSONValue?
    /// The verified environment (see `AppStoreEnvironment.environment(ofPayload:)`); nil only
    /// for a notification Apple signed that names none StoreRelay knows (it is quarantined).
    public var environment: AppStoreEnvironment?
    /// False when the notification was accepted without its signature being checked (Xcode
    /// and LocalTesting data, by opt-in).
    public var verified = true
    /// How the notification reached the gateway when not by Apple's push: `"history"` for
    /// one recovered from Notification History (the event's `recoveredBy`).
    public var recoveredBy: String?

    public init(
        payload: JSONObject,
        transaction: JSONValue? = nil,
        renewal: JSONValue? = nil,
        appTransaction: JSONValue? = nil,
        environment: AppStoreEnvironment?
    ) {
        self.payload = payload
        self.transaction = transaction
        self.renewal = renewal
        self.appTransaction = appTransaction
        self.environment = environment
    }

    /// The content of a payload whose environment is read from the payload itself; nil when
    /// the payload declares none (see `AppStoreEnvironment.environment(ofPayload:)`).
    public init?(
        payload: JSONObject,
        transaction: JSONValue? = nil,
        renewal: JSONValue? = nil,
        appTransaction: JSONValue? = nil
    ) {
        guard let environment = AppStoreEnvironment.environment(ofPayload: payload) else { return nil }
        self.init(payload: payload, transaction: transaction, renewal: renewal,
                  appTransaction: appTransaction, environment: environment)
    }

    /// The container that describes the app: `data`, else `summary`, `externalPurchaseToken`
    /// or `appData`, in that order, as Apple sends exactly one of them.
    var appContainers: [JSONObject] {
        ["data", "summary", "externalPurchaseToken", "appData"].compactMap { payload[$0]?.objectValue }
    }
}
