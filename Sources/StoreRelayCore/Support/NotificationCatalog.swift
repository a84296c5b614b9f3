/// Every App Store Server Notifications V2 `notificationType` and the `subtype`s Apple sends
/// with it; `nil` in `subtypes` means the type is also sent without a subtype.
///
/// Source of truth: Apple's documentation of `notificationType`
/// (https://developer.apple.com/documentation/appstoreservernotifications/notificationtype),
/// `subtype` (https://developer.apple.com/documentation/appstoreservernotifications/subtype)
/// and the App Store Server Notifications changelog, as of its April 2026 entry. Notes:
/// - `OFFER_REDEEMED` with `INITIAL_BUY` / `RESUBSCRIBE`: since January 2024 Apple sends
///   `SUBSCRIBED` when an offer is redeemed on an inactive subscription; older notifications
///   (and replays of them) still carry these pairs, so a gateway must handle them.
/// - `EXTERNAL_PURCHASE_TOKEN`: `UNREPORTED` (February 2024), `CREATED` and
///   `ACTIVE_TOKEN_REMINDER` (custom link tokens, June 2025).
/// - `METADATA_UPDATE`, `MIGRATION`, `PRICE_CHANGE`: Advanced Commerce API subscriptions
///   (March 2025; the changelog spells the second one "MIGRATE", the type list `MIGRATION`).
/// - `RESCIND_CONSENT` carries `appData` instead of `data` (November 2025).
public enum NotificationCatalog {
    public static let all: [(type: String, subtypes: [String?])] = [
        ("SUBSCRIBED", ["INITIAL_BUY", "RESUBSCRIBE"]),
        ("DID_CHANGE_RENEWAL_PREF", ["UPGRADE", "DOWNGRADE", nil]),
        ("DID_CHANGE_RENEWAL_STATUS", ["AUTO_RENEW_ENABLED", "AUTO_RENEW_DISABLED"]),
        ("OFFER_REDEEMED", ["UPGRADE", "DOWNGRADE", nil, "INITIAL_BUY", "RESUBSCRIBE"]),
        ("DID_RENEW", [nil, "BILLING_RECOVERY"]),
        ("EXPIRED", ["VOLUNTARY", "BILLING_RETRY", "PRICE_INCREASE", "PRODUCT_NOT_FOR_SALE"]),
        ("DID_FAIL_TO_RENEW", [nil, "GRACE_PERIOD"]),
        ("GRACE_PERIOD_EXPIRED", [nil]),
        ("PRICE_INCREASE", ["PENDING", "ACCEPTED"]),
        ("REFUND", [nil]),
        ("REFUND_DECLINED", [nil]),
        ("REFUND_REVERSED", [nil]),
        ("CONSUMPTION_REQUEST", [nil]),
        ("RENEWAL_EXTENDED", [nil]),
        ("RENEWAL_EXTENSION", ["SUMMARY", "FAILURE"]),
        ("REVOKE", [nil]),
        ("TEST", [nil]),
        ("ONE_TIME_CHARGE", [nil]),
        ("EXTERNAL_PURCHASE_TOKEN", ["UNREPORTED", "CREATED", "ACTIVE_TOKEN_REMINDER"]),
        ("RESCIND_CONSENT", [nil]),
        ("METADATA_UPDATE", [nil]),
        ("MIGRATION", [nil]),
        ("PRICE_CHANGE", [nil]),
    ]

    /// Every (type, subtype) pair, in catalog order.
    public static var combinations: [(type: String, subtype: String?)] {
        all.flatMap { entry in entry.subtypes.map { (type: entry.type, subtype: $0) } }
    }

    /// The subtypes documented for `type`, or nil when the type is unknown.
    public static func subtypes(of type: String) -> [String?]? {
        all.first { $0.type == type }?.subtypes
    }
}
