public import StoreRelayCore

/// What to simulate: the options of `storerelay simulate`.
public struct NotificationRequest: Sendable, Hashable {
    /// The bundle id of the SPEC's example app, so its `routes.conf` accepts the default.
    public static let defaultBundleId = "com.acme.journal"
    /// The `apple-id` of the SPEC's example app.
    public static let defaultAppAppleId: Int64 = 1_234_567_890

    /// A `notificationType` from `NotificationCatalog`.
    public var type: String
    /// A subtype documented for `type`, or nil for none.
    public var subtype: String?
    /// `.sandbox` or `.production`: the environments Apple signs with its production chain.
    public var environment: AppStoreEnvironment
    public var bundleId: String
    public var appAppleId: Int64
    /// `data.bundleVersion` (CFBundleVersion of the app).
    public var bundleVersion: String
    /// What the customer bought: a subscription; a consumable, which refund notifications
    /// report without renewal info or status; or a monthly subscription with a 12-month
    /// commitment, whose transaction and renewal info carry Apple's `billingPlanType` and
    /// `commitmentInfo` (2026).
    public var product: Product = .subscription

    public enum Product: String, Sendable, Hashable, CaseIterable {
        case subscription, consumable, commitment

        /// The types Apple sends for any In-App Purchase, not only subscriptions.
        public static let consumableTypes: Set<String> = ["CONSUMPTION_REQUEST", "REFUND", "REFUND_DECLINED", "REFUND_REVERSED"]

        /// Whether `type` carries the transaction and renewal info of an App Store
        /// subscription: not a test, summary, token, consent, one-time charge, or an Advanced
        /// Commerce subscription (which has its own descriptors).
        static func reportsAppStoreSubscription(type: String, subtype: String?) -> Bool {
            let others: Set<String> = ["TEST", "EXTERNAL_PURCHASE_TOKEN", "RESCIND_CONSENT", "ONE_TIME_CHARGE",
                                       "METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE"]
            return !others.contains(type) && !(type == "RENEWAL_EXTENSION" && subtype == "SUMMARY")
        }
    }

    public init(
        type: String, subtype: String? = nil, environment: AppStoreEnvironment = .sandbox,
        bundleId: String = NotificationRequest.defaultBundleId,
        appAppleId: Int64 = NotificationRequest.defaultAppAppleId, bundleVersion: String = "42"
    ) {
        self.type = type
        self.subtype = subtype
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.bundleVersion = bundleVersion
    }

    /// Checks every option; the error says which one is wrong and what would be right.
    public func validate() throws(SimulatorError) {
        try NotificationCatalog.validate(type: type, subtype: subtype)
        guard environment == .sandbox || environment == .production else {
            throw SimulatorError(.invalidOption, "the environment must be sandbox or production, not \(environment.rawValue)")
        }
        // Apple's bundle ids: letters, digits, '.', '-' (and '_' seen in old apps).
        let allowed = bundleId.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x2D || byte == 0x5F
        }
        guard !bundleId.isEmpty, bundleId.utf8.count <= 155, allowed else {
            throw SimulatorError(.invalidOption, "the bundle id '\(bundleId.prefix(60))' is not valid (letters, digits, '.', '-')")
        }
        guard appAppleId > 0 else {
            throw SimulatorError(.invalidOption, "the apple id must be a positive number")
        }
        if product == .consumable, !Product.consumableTypes.contains(type) {
            let types = Product.consumableTypes.sorted().joined(separator: ", ")
            throw SimulatorError(.invalidOption, "\(type) is about subscriptions; a consumable can only be simulated for \(types)")
        }
        if product == .commitment, !Product.reportsAppStoreSubscription(type: type, subtype: subtype) {
            throw SimulatorError(.invalidOption, "\(type)\(subtype.map { "/" + $0 } ?? "") reports no App Store subscription, so it cannot carry a commitment")
        }
    }

    /// Apple's spelling of the environment: `Sandbox` or `Production`.
    var appleEnvironment: String { environment == .production ? "Production" : "Sandbox" }
}

/// A signed notification, ready to post.
public struct SimulatedNotification: Sendable {
    /// The outer payload as signed (nested JWS as strings, as Apple sends them).
    public let payload: JSONValue
    /// The JWS: `base64url(header).base64url(payload).base64url(R‖S)`.
    public let signedPayload: String

    public var notificationUUID: String { payload["notificationUUID"]?.stringValue ?? "" }

    /// The HTTP body Apple posts: `{"signedPayload":"<JWS>"}`.
    public var httpBody: String {
        JSONValue.object(JSONObject([(key: "signedPayload", value: .string(signedPayload))])).serialized()
    }
}
