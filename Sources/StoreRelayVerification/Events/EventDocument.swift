import StoreRelayCore

/// The members of one normalized event before they are laid out, shared by the V2 and V1
/// paths so both produce the same keys in the same order (SPEC "Normalized event").
struct EventDocument {
    var id: String
    var version: String
    /// Nil (null in the event) only for a quarantined notification whose environment StoreRelay
    /// could not read.
    var environment: AppStoreEnvironment?
    var type: String
    var subtype: String?
    var legacyType: String?
    var signedDate: JSONValue = .null
    var receivedAt: Timestamp
    /// Whether the gateway checked the notification (signature and chain, or V1's shared
    /// secret); false only for Xcode / LocalTesting data accepted unverified by opt-in.
    var verified = true
    var bundleId: JSONValue = .null
    var appAppleId: JSONValue = .null
    var bundleVersion: JSONValue = .null
    var originalTransactionId: JSONValue = .null
    var productId: JSONValue = .null
    var status: JSONValue = .null
    var transaction: JSONValue = .null
    var renewal: JSONValue = .null
    var summary: JSONValue = .null
    var externalPurchaseToken: JSONValue = .null
    var appTransaction: JSONValue = .null
    var consumptionRequestReason: JSONValue = .null
    /// `"history"` for a notification recovered from Apple's Notification History rather than
    /// received from Apple's push; null otherwise.
    var recoveredBy: String?
    /// What Apple sent that no other key carries, in Apple's own shape; null when nothing.
    var extra: JSONValue = .null

    init(id: String, version: String, environment: AppStoreEnvironment?, type: String,
         subtype: String?, legacyType: String?, receivedAt: Timestamp) {
        self.id = id
        self.version = version
        self.environment = environment
        self.type = type
        self.subtype = subtype
        self.legacyType = legacyType
        self.receivedAt = receivedAt
    }

    /// The event object, every key present, `raw` null (it is filled per destination).
    func object() -> JSONObject {
        let app: JSONObject = JSONObject([
            ("bundleId", bundleId), ("appAppleId", appAppleId), ("bundleVersion", bundleVersion),
        ])
        let subscription: JSONObject = JSONObject([
            ("originalTransactionId", originalTransactionId), ("productId", productId), ("status", status),
        ])
        let members: [JSONObject.Member] = [
            ("id", .string(id)),
            ("source", "appstore"),
            ("version", .string(version)),
            ("environment", .string(environment?.rawValue)),
            ("type", .string(type)),
            ("subtype", .string(subtype)),
            ("legacyType", .string(legacyType)),
            ("signedDate", signedDate),
            ("receivedAt", .string(receivedAt.iso8601)),
            ("verified", .bool(verified)),
            ("app", .object(app)),
            ("subscription", .object(subscription)),
            ("transaction", transaction),
            ("renewal", renewal),
            ("summary", summary),
            ("externalPurchaseToken", externalPurchaseToken),
            ("appTransaction", appTransaction),
            ("consumptionRequestReason", consumptionRequestReason),
            ("recoveredBy", .string(recoveredBy)),
            ("extra", extra),
            ("raw", .null),
        ]
        assert(members.map(\.key) == NormalizedEvent.keys)
        return JSONObject(members)
    }
}
