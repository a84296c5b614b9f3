/// The names of Google Play RTDN notification types (developer.android.com/google/play/billing/rtdn-reference).
///
/// A number this build does not know passes through as `SUBSCRIPTION_NOTIFICATION_<n>` or
/// `ONE_TIME_PRODUCT_NOTIFICATION_<n>`, the way unknown Apple types pass through: routes can
/// still match it by that name, and nothing is lost. 14, 15 and 16 are unassigned.
public enum PlayNotificationTypes {
    public static let subscription: [Int64: String] = [
        1: "SUBSCRIPTION_RECOVERED",
        2: "SUBSCRIPTION_RENEWED",
        3: "SUBSCRIPTION_CANCELED",
        4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD",
        6: "SUBSCRIPTION_IN_GRACE_PERIOD",
        7: "SUBSCRIPTION_RESTARTED",
        8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED",
        9: "SUBSCRIPTION_DEFERRED",
        10: "SUBSCRIPTION_PAUSED",
        11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED",
        12: "SUBSCRIPTION_REVOKED",
        13: "SUBSCRIPTION_EXPIRED",
        17: "SUBSCRIPTION_ITEMS_CHANGED",
        18: "SUBSCRIPTION_CANCELLATION_SCHEDULED",
        19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
        20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED",
        22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED",
    ]

    public static let oneTimeProduct: [Int64: String] = [
        1: "ONE_TIME_PRODUCT_PURCHASED",
        2: "ONE_TIME_PRODUCT_CANCELED",
    ]

    public static func subscriptionName(_ type: Int64) -> String {
        subscription[type] ?? "SUBSCRIPTION_NOTIFICATION_\(type)"
    }

    public static func oneTimeProductName(_ type: Int64) -> String {
        oneTimeProduct[type] ?? "ONE_TIME_PRODUCT_NOTIFICATION_\(type)"
    }

    /// The names of the other kinds, and of a push quarantined because it could not be read.
    public static let otherNames: Set<String> = ["VOIDED_PURCHASE", "TEST", "UNREADABLE"]

    /// Whether `name` is a type a Google Play event can have: a known name, or a number this
    /// build does not know passed through (`SUBSCRIPTION_NOTIFICATION_14`). Lets the route
    /// check tell a Play type from a typo of an Apple one.
    public static func isPlayType(_ name: String) -> Bool {
        if otherNames.contains(name) || subscription.values.contains(name) || oneTimeProduct.values.contains(name) { return true }
        for prefix in ["SUBSCRIPTION_NOTIFICATION_", "ONE_TIME_PRODUCT_NOTIFICATION_"] where name.hasPrefix(prefix) {
            let number = name.dropFirst(prefix.count)
            return !number.isEmpty && number.count <= 10 && number.allSatisfy { ("0"..."9").contains($0) }
        }
        return false
    }
}
