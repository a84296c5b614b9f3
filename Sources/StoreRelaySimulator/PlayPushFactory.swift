public import StoreRelayCore
import StoreRelayCrypto

/// What `simulate --store play` is asked to build.
public struct PlayPushRequest: Sendable {
    public static let defaultPackage = "com.acme.journal"
    /// The push subscription's service account the token names (`push-account` must match).
    public static let defaultAccount = "storerelay-simulate@storerelay-dev.iam.gserviceaccount.com"
    public static let defaultSubscriptionId = "premium_monthly"
    public static let defaultProductId = "coins_100"

    public var type: String
    public var packageName = defaultPackage
    /// The token's `aud`: the push subscription's audience (`push-audience`).
    public var audience: String
    /// The token's `email`.
    public var account = defaultAccount
    /// For VOIDED_PURCHASE: a one-time product's (productType 2) rather than a subscription's (1).
    public var voidedOneTimeProduct = false

    public init(type: String, audience: String) {
        self.type = type
        self.audience = audience
    }
}

/// One simulated push: the body Pub/Sub POSTs and its `Authorization` header.
public struct PlayPush: Sendable {
    /// `{"message":{"attributes":{},"data":...,"messageId":...,...},"subscription":...}`.
    public let body: JSONValue
    /// The decoded `message.data`.
    public let notification: JSONValue
    /// `Bearer <JWT>`.
    public let authorization: String
    public let messageId: String

    /// The body as posted.
    public var httpBody: String { body.serialized() }

    /// What `--out` writes: the push as an HTTP request without its request line — the
    /// `Authorization` and `Content-Type` headers, an empty line, then the body exactly as
    /// posted — which `storerelay verify` reads back.
    public var savedRequest: String {
        "Authorization: \(authorization)\nContent-Type: application/json\n\n" + httpBody
    }
}

/// Builds Google Play RTDN pushes as Pub/Sub delivers them, signed with the dev key.
public struct PlayPushFactory: Sendable {
    public static let issuer = "https://accounts.google.com"
    /// What a push token lives (Google's do an hour).
    static let tokenLifetime: Int64 = 3600

    private let key: PlayDevKey
    private let clock: any TimeSource

    public init(key: PlayDevKey, clock: any TimeSource = WallClock()) {
        self.key = key
        self.clock = clock
    }

    public func make(_ request: PlayPushRequest) throws(SimulatorError) -> PlayPush {
        guard let (kind, number) = PlayNotificationCatalog.lookup(request.type) else {
            throw SimulatorError(.unknownType, "unknown Google Play notification type '\(request.type)' (see `storerelay simulate --store play --list`)")
        }
        guard !request.packageName.isEmpty, !request.audience.isEmpty, request.account.contains("@") else {
            throw SimulatorError(.invalidOption, "--bundle and --audience must not be empty, and --account must be an email address")
        }
        let now = clock.now()
        let token = Self.purchaseToken()
        var notification = OrderedFields([
            ("version", "1.0"), ("packageName", .string(request.packageName)), ("eventTimeMillis", .string(String(now.milliseconds))),
        ])
        switch kind {
        case .subscription:
            notification.set("subscriptionNotification", OrderedFields([
                ("version", "1.0"), ("notificationType", .integer(number)), ("purchaseToken", .string(token)),
                ("subscriptionId", .string(PlayPushRequest.defaultSubscriptionId)),
            ]).value)
        case .oneTimeProduct:
            notification.set("oneTimeProductNotification", OrderedFields([
                ("version", "1.0"), ("notificationType", .integer(number)), ("purchaseToken", .string(token)),
                ("sku", .string(PlayPushRequest.defaultProductId)),
            ]).value)
        case .voidedPurchase:
            notification.set("voidedPurchaseNotification", OrderedFields([
                ("purchaseToken", .string(token)), ("orderId", .string(Self.orderId())),
                ("productType", .integer(request.voidedOneTimeProduct ? 2 : 1)), ("refundType", 1),
            ]).value)
        case .test:
            notification.set("testNotification", OrderedFields([("version", "1.0")]).value)
        }
        let messageId = RandomIdentifiers.digits(prefix: "1", length: 16)
        let publishTime = Timestamp(milliseconds: now.milliseconds).iso8601
        let data = notification.value
        // As Pub/Sub pushes: each message field in both spellings, attributes empty.
        let body = OrderedFields([
            ("message", OrderedFields([
                ("attributes", .object(JSONObject())), ("data", .string(Base64.encode(data.serializedBytes()))),
                ("messageId", .string(messageId)), ("message_id", .string(messageId)),
                ("publishTime", .string(publishTime)), ("publish_time", .string(publishTime)),
            ]).value),
            ("subscription", "projects/storerelay-dev/subscriptions/play-rtdn-push"),
        ]).value
        let jwt = try pushToken(audience: request.audience, account: request.account, issuedAt: now.seconds)
        return PlayPush(body: body, notification: data, authorization: "Bearer " + jwt, messageId: messageId)
    }

    /// The OIDC token Pub/Sub attaches to a push with authentication, signed with the dev key.
    func pushToken(audience: String, account: String, issuedAt: Int64) throws(SimulatorError) -> String {
        let header = OrderedFields([("alg", "RS256"), ("kid", .string(key.kid)), ("typ", "JWT")]).value
        let subject = RandomIdentifiers.digits(prefix: "1", length: 21)
        let claims = OrderedFields([
            ("aud", .string(audience)), ("azp", .string(subject)), ("email", .string(account)), ("email_verified", true),
            ("exp", .integer(issuedAt + Self.tokenLifetime)), ("iat", .integer(issuedAt)), ("iss", .string(Self.issuer)),
            ("sub", .string(subject)),
        ]).value
        let input = Base64.urlEncode(header.serializedBytes()) + "." + Base64.urlEncode(claims.serializedBytes())
        do {
            return input + "." + Base64.urlEncode(try key.key.signRS256(Array(input.utf8)))
        } catch {
            throw SimulatorError(.signing, "cannot sign the push token: \(error.reason)")
        }
    }

    /// Shaped like Google's: 24 lowercase letters, a dot, then `AO-J1O` and base64url.
    static func purchaseToken() -> String {
        let letters = SecureRandom.bytes(24).map { Character(Unicode.Scalar(0x61 + $0 % 26)) }
        return String(letters) + ".AO-J1O" + Base64.urlEncode(SecureRandom.bytes(96))
    }

    /// `GPA.3312-4555-0192-88317`.
    static func orderId() -> String {
        "GPA." + [4, 4, 4, 5].map { RandomIdentifiers.digits(prefix: "", length: $0) }.joined(separator: "-")
    }
}
