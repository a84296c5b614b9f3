/// Every Google Play real-time developer notification `simulate --store play` builds, by the
/// name the event carries as its `type` (Google's reference names them; the payload carries
/// the number).
public enum PlayNotificationCatalog {
    /// Which member of the DeveloperNotification carries it.
    public enum Kind: String, Sendable {
        case subscription, oneTimeProduct, voidedPurchase, test
    }

    /// `subscriptionNotification.notificationType`, by name.
    public static let subscriptionTypes: [(name: String, number: Int64)] = [
        ("SUBSCRIPTION_RECOVERED", 1), ("SUBSCRIPTION_RENEWED", 2), ("SUBSCRIPTION_CANCELED", 3), ("SUBSCRIPTION_PURCHASED", 4),
        ("SUBSCRIPTION_ON_HOLD", 5), ("SUBSCRIPTION_IN_GRACE_PERIOD", 6), ("SUBSCRIPTION_RESTARTED", 7),
        ("SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 8), ("SUBSCRIPTION_DEFERRED", 9), ("SUBSCRIPTION_PAUSED", 10),
        ("SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 11), ("SUBSCRIPTION_REVOKED", 12), ("SUBSCRIPTION_EXPIRED", 13),
        ("SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 20),
    ]

    /// `oneTimeProductNotification.notificationType`, by name.
    public static let oneTimeProductTypes: [(name: String, number: Int64)] = [
        ("ONE_TIME_PRODUCT_PURCHASED", 1), ("ONE_TIME_PRODUCT_CANCELED", 2),
    ]

    public static let voidedPurchase = "VOIDED_PURCHASE"
    public static let test = "TEST"

    /// The kind and number of a type name, or nil when there is no such type.
    public static func lookup(_ name: String) -> (kind: Kind, number: Int64?)? {
        if let entry = subscriptionTypes.first(where: { $0.name == name }) { return (.subscription, entry.number) }
        if let entry = oneTimeProductTypes.first(where: { $0.name == name }) { return (.oneTimeProduct, entry.number) }
        if name == voidedPurchase { return (.voidedPurchase, nil) }
        if name == test { return (.test, nil) }
        return nil
    }

    /// Every name, one a line, for `simulate --store play --list`.
    public static var listing: String {
        (subscriptionTypes.map(\.name) + oneTimeProductTypes.map(\.name) + [voidedPurchase, test]).joined(separator: "\n")
    }
}
