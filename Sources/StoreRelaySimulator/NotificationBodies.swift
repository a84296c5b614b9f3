import StoreRelayCore
import StoreRelayCrypto

/// The payload objects that replace `data` for some types: `summary` (RENEWAL_EXTENSION /
/// SUMMARY), `externalPurchaseToken` (EXTERNAL_PURCHASE_TOKEN) and the app transaction of
/// `appData` (RESCIND_CONSENT). Shapes follow Apple's docs and Apple's library test models.
enum NotificationBodies {
    /// The result of "Extend Subscription Renewal Dates for All Active Subscribers".
    static func summary(_ request: NotificationRequest) -> JSONValue {
        [
            "environment": .string(request.appleEnvironment),
            "appAppleId": .integer(request.appAppleId),
            "bundleId": .string(request.bundleId),
            "productId": .string("\(request.bundleId).premium.monthly"),
            "requestIdentifier": .string(RandomIdentifiers.uuid()),
            "storefrontCountryCodes": ["CAN", "USA", "MEX"],
            "succeededCount": 1250,
            "failedCount": 3,
        ]
    }

    /// An external purchase token. Apple marks sandbox tokens only by the `SANDBOX_` prefix of
    /// `externalPurchaseId`; custom link tokens (`CREATED`, `ACTIVE_TOKEN_REMINDER`) also
    /// carry their `tokenType` and `tokenExpirationDate`.
    static func externalPurchaseToken(_ request: NotificationRequest, subtype: String?, now: Int64) -> JSONValue {
        let id = (request.environment == .sandbox ? "SANDBOX_" : "") + RandomIdentifiers.uuid()
        let day: Int64 = 86_400_000
        // UNREPORTED arrives ten days after the token was created; a reminder monthly.
        let created = subtype == "CREATED" ? now - 2_000 : subtype == "ACTIVE_TOKEN_REMINDER" ? now - 30 * day : now - 10 * day
        var fields = OrderedFields([
            ("externalPurchaseId", .string(id)),
            ("tokenCreationDate", .integer(created / 1000 * 1000)),
            ("appAppleId", .integer(request.appAppleId)),
            ("bundleId", .string(request.bundleId)),
        ])
        if subtype == "CREATED" || subtype == "ACTIVE_TOKEN_REMINDER" {
            fields.set("tokenType", "SERVICES")
            fields.set("tokenExpirationDate", .integer(created / 1000 * 1000 + 365 * day))
        }
        return fields.value
    }

    /// The decoded `signedAppTransactionInfo` (Apple's `AppTransaction`): the app purchase
    /// whose consent is rescinded. Its environment is `receiptType`.
    static func appTransaction(_ request: NotificationRequest, now: Int64, appTransactionId: String) -> JSONValue {
        let firstLaunch = (now - 90 * 86_400_000) / 1000 * 1000
        return OrderedFields([
            ("receiptType", .string(request.appleEnvironment)),
            ("appAppleId", .integer(request.appAppleId)),
            ("bundleId", .string(request.bundleId)),
            ("applicationVersion", .string(request.bundleVersion)),
            ("versionExternalIdentifier", 873_245_614),
            ("receiptCreationDate", .integer(now / 1000 * 1000)),
            ("originalPurchaseDate", .integer(firstLaunch)),
            ("originalApplicationVersion", "1"),
            ("deviceVerification", .string(Base64Text.random(48))),
            ("deviceVerificationNonce", .string(RandomIdentifiers.uuid())),
            ("appTransactionId", .string(appTransactionId)),
            ("originalPlatform", "iOS"),
        ]).value
    }
}

/// Random bytes as standard base64, for opaque values such as `deviceVerification`.
enum Base64Text {
    static func random(_ count: Int) -> String {
        Base64.encode(SecureRandom.bytes(count))
    }
}
