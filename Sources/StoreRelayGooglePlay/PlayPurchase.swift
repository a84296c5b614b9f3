public import StoreRelayCore

/// What the Play Developer API says of one purchase: its answer whole, and whether it is a
/// test purchase (license testers, test cards), which the event reports as `sandbox`.
public struct PlayPurchase: Sendable, Hashable {
    /// The API's JSON object as parsed, members in Google's order: the event's `subscription`.
    public let resource: JSONValue
    public let isTestPurchase: Bool

    public init(resource: JSONValue, isTestPurchase: Bool) {
        self.resource = resource
        self.isTestPurchase = isTestPurchase
    }

    /// A `SubscriptionPurchaseV2` (`purchases.subscriptionsv2.get`): a test purchase has a
    /// `testPurchase` object (empty, but present).
    public static func subscription(_ resource: JSONValue) -> PlayPurchase {
        PlayPurchase(resource: resource, isTestPurchase: resource["testPurchase"]?.objectValue != nil)
    }

    /// A `ProductPurchase` (`purchases.products.get`): `purchaseType` 0 is "Test (i.e.
    /// purchased from a license testing account)"; it is absent for a standard purchase.
    public static func product(_ resource: JSONValue) -> PlayPurchase {
        PlayPurchase(resource: resource, isTestPurchase: resource["purchaseType"]?.int64Value == 0)
    }
}
