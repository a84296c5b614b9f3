import StoreRelayCore

/// Every Google Play real-time developer notification `simulate --store play` builds, by the
/// name the event carries as its `type` (Google's reference names them; the payload carries
/// the number).
public enum PlayNotificationCatalog {
    /// Which member of the DeveloperNotification carries it.
    public enum Kind: String, Sendable {
        case subscription, oneTimeProduct, voidedPurchase, test
    }

    /// `subscriptionNotification.notificationType`, by name: the names the gateway gives them.
    public static let subscriptionTypes: [(name: String, number: Int64)] =
        PlayNotificationTypes.subscription.sorted { $0.key < $1.key }.map { (name: $0.value, number: $0.key) }

    /// `oneTimeProductNotification.notificationType`, by name.
    public static let oneTimeProductTypes: [(name: String, number: Int64)] =
        PlayNotificationTypes.oneTimeProduct.sorted { $0.key < $1.key }.map { (name: $0.value, number: $0.key) }

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
