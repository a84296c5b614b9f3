import StoreRelayCore

/// One App Store notification as every downstream receives it (SPEC "Normalized event"),
/// whatever Apple sent: V2 JWS or V1 legacy JSON.
///
/// The routing fields are lifted out as properties so the gateway never re-reads the JSON;
/// `json` is the full event with `raw` null, which is what the journal stores. Apple's body is
/// added only when a destination asks for it (`include-raw yes`), by `jsonBytes(includingRaw:)`.
public struct NormalizedEvent: Sendable, Hashable {
    /// The event's top-level keys, always all present and in this order.
    public static let keys: [String] = [
        "id", "source", "version", "environment", "type", "subtype", "legacyType", "signedDate",
        "receivedAt", "verified", "app", "subscription", "transaction", "renewal", "summary",
        "externalPurchaseToken", "appTransaction", "consumptionRequestReason", "recoveredBy", "extra", "raw",
    ]

    /// `notificationUUID` for V2; for V1 a UUID-shaped hash of the body (`V1Notification.eventID`).
    public let id: String
    /// Nil only for a quarantined notification Apple signed whose environment StoreRelay could
    /// not read (a name newer than this build, or no container it knows).
    public let environment: AppStoreEnvironment?
    /// The V2 notification type (V1 types are mapped to it), e.g. `DID_RENEW`.
    public let type: String
    public let subtype: String?
    /// The V1 `notification_type` when the notification came in as V1, else nil.
    public let legacyType: String?
    /// `app.bundleId`, nil only when Apple sent none.
    public let bundleId: String?
    /// `subscription.originalTransactionId`: what an operator looks a subscription up by.
    public let originalTransactionId: String?
    /// `transaction.transactionId`: the other id an operator searches by (the event log
    /// keeps it without parsing the event again).
    public let transactionId: String?
    /// Whether the gateway verified the notification (`verified` in the event): false for
    /// Xcode / LocalTesting data accepted unverified by opt-in; nil for an event stored by a
    /// StoreRelay that did not record it.
    public let verified: Bool?
    /// The event serialized once, `raw` null: the journal, file queues and webhooks all send
    /// these bytes, and they are all the event keeps. A parsed tree costs several times its
    /// text in memory, and every event waiting for a destination holds one.
    private let serialized: [UInt8]

    /// The whole event, `raw` null, parsed again from `serialized` (for the admin API, dead
    /// letters and `include-raw`; never on the way in).
    public var json: JSONObject {
        // Our own serializer's output, so it always parses.
        (try? JSONValue.parse(serialized))?.objectValue ?? JSONObject()
    }

    init(document: EventDocument) {
        id = document.id
        environment = document.environment
        type = document.type
        subtype = document.subtype
        legacyType = document.legacyType
        bundleId = document.bundleId.stringValue
        originalTransactionId = document.originalTransactionId.stringValue
        transactionId = document.transaction["transactionId"]?.stringValue
        verified = document.verified
        serialized = JSONValue.object(document.object()).serializedBytes()
    }

    init(id: String, environment: AppStoreEnvironment?, type: String, subtype: String?,
         legacyType: String?, bundleId: String?, verified: Bool?, json: JSONObject) {
        self.id = id
        self.verified = verified
        originalTransactionId = json["subscription"]?["originalTransactionId"]?.stringValue
        transactionId = json["transaction"]?["transactionId"]?.stringValue
        self.environment = environment
        self.type = type
        self.subtype = subtype
        self.legacyType = legacyType
        self.bundleId = bundleId
        serialized = JSONValue.object(json).serializedBytes()
    }

    /// The event as sent to destinations without `include-raw`: `raw` is null.
    public func jsonBytes() -> [UInt8] {
        serialized
    }

    /// The event with `raw` holding Apple's original body as a JSON string, for destinations
    /// with `include-raw yes`. A V1 body's `password` members are removed first: the shared
    /// secret must never leave the gateway inside an event.
    public func jsonBytes(includingRaw originalBody: [UInt8]) -> [UInt8] {
        var object = json
        object["raw"] = .string(Self.rawString(ofBody: originalBody))
        return JSONValue.object(object).serializedBytes()
    }

    /// Apple's body as text for `raw`. The gateway stores bodies already redacted
    /// (`V1Body.redacted`); redacting again here keeps the rule true for any caller.
    static func rawString(ofBody body: [UInt8]) -> String {
        String(decoding: V1Body.redacted(body), as: UTF8.self)
    }
}
