import StoreRelayCore

/// One customer's auto-renewable subscription as Apple describes it in
/// `JWSTransactionDecodedPayload` and `JWSRenewalInfoDecodedPayload`: identifiers, products,
/// dates and status. `init` builds an active, renewing subscription; `apply(type:subtype:)`
/// (in SubscriptionScenario+Types.swift) bends it into what each notification reports.
struct SubscriptionScenario {
    let request: NotificationRequest
    let now: Int64

    // Identifiers shared by every transaction of the subscription.
    let originalTransactionId: String
    var transactionId: String
    let webOrderLineItemId: String
    let subscriptionGroupIdentifier: String
    let appTransactionId: String
    /// The UUID the app set when the customer bought (`appAccountToken`), in the transaction
    /// and, since 2025, in the renewal info.
    let appAccountToken: String

    // Products of the group, from the lowest level to the highest, with prices in
    // milliunits of the currency (9990 = $9.99), as `price` and `renewalPrice` are.
    let basic: (productId: String, price: Int64)
    let premium: (productId: String, price: Int64)
    let premiumPlus: (productId: String, price: Int64)

    /// Transaction fields in the order Apple writes them.
    var transaction = OrderedFields()
    /// Renewal fields in the order Apple writes them.
    var renewal = OrderedFields()
    /// `data.status`: 1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked.
    var status: Int64 = 1
    /// Whether the notification carries a `signedRenewalInfo` (not for one-time purchases).
    var hasRenewal = true

    /// One billing period: a month in production; 3 minutes in sandbox, where Apple
    /// accelerates renewals (the real sandbox vectors renew every 180 s).
    var period: Int64 { request.environment == .production ? 30 * 86_400_000 : 180_000 }
    /// The billing grace period: 16 days in production, accelerated in sandbox.
    var gracePeriod: Int64 { request.environment == .production ? 16 * 86_400_000 : 360_000 }

    init(request: NotificationRequest, now: Timestamp) {
        self.request = request
        self.now = now.milliseconds
        let production = request.environment == .production
        // Sandbox ids start 2000000..., production ones are other 15-16 digit numbers.
        let idPrefix = production ? "43000" : "200000"
        originalTransactionId = RandomIdentifiers.digits(prefix: idPrefix, length: 16)
        transactionId = RandomIdentifiers.digits(prefix: idPrefix, length: 16)
        webOrderLineItemId = RandomIdentifiers.digits(prefix: production ? "43000" : "200000", length: 16)
        subscriptionGroupIdentifier = RandomIdentifiers.digits(prefix: "21", length: 8)
        appTransactionId = RandomIdentifiers.digits(prefix: "70", length: 18)
        appAccountToken = RandomIdentifiers.uuid()
        basic = ("\(request.bundleId).basic.monthly", 4990)
        premium = ("\(request.bundleId).premium.monthly", 9990)
        premiumPlus = ("\(request.bundleId).premiumplus.monthly", 14990)

        // Apple's purchase and expiry dates are whole seconds; signedDate keeps milliseconds.
        let purchaseDate = (self.now - 12_000) / 1000 * 1000
        let originalPurchaseDate = purchaseDate - 3 * period
        let expiresDate = purchaseDate + period
        transaction = OrderedFields([
            ("transactionId", .string(transactionId)),
            ("originalTransactionId", .string(originalTransactionId)),
            ("webOrderLineItemId", .string(webOrderLineItemId)),
            ("bundleId", .string(request.bundleId)),
            ("productId", .string(premium.productId)),
            ("subscriptionGroupIdentifier", .string(subscriptionGroupIdentifier)),
            ("purchaseDate", .integer(purchaseDate)),
            ("originalPurchaseDate", .integer(originalPurchaseDate)),
            ("expiresDate", .integer(expiresDate)),
            ("quantity", 1),
            ("type", "Auto-Renewable Subscription"),
            ("appAccountToken", .string(appAccountToken)),
            ("inAppOwnershipType", "PURCHASED"),
            ("signedDate", .integer(self.now)),
            ("environment", .string(request.appleEnvironment)),
            ("transactionReason", "RENEWAL"),
            ("storefront", "USA"),
            ("storefrontId", "143441"),
            ("price", .integer(premium.price)),
            ("currency", "USD"),
            ("appTransactionId", .string(appTransactionId)),
        ])
        renewal = OrderedFields([
            ("originalTransactionId", .string(originalTransactionId)),
            ("autoRenewProductId", .string(premium.productId)),
            ("productId", .string(premium.productId)),
            ("autoRenewStatus", 1),
            ("renewalPrice", .integer(premium.price)),
            ("currency", "USD"),
            ("signedDate", .integer(self.now)),
            ("environment", .string(request.appleEnvironment)),
            ("recentSubscriptionStartDate", .integer(originalPurchaseDate)),
            ("renewalDate", .integer(expiresDate)),
            ("appAccountToken", .string(appAccountToken)),
            ("appTransactionId", .string(appTransactionId)),
        ])
    }

    // MARK: Edits shared by several types

    /// Moves the current period so that it starts at `purchaseDate`.
    mutating func setPeriod(purchaseDate: Int64, length: Int64? = nil) {
        let expires = purchaseDate + (length ?? period)
        transaction.set("purchaseDate", .integer(purchaseDate))
        transaction.set("expiresDate", .integer(expires))
        renewal.set("renewalDate", .integer(expires))
    }

    var purchaseDate: Int64 { transaction["purchaseDate"]?.int64Value ?? now }
    var expiresDate: Int64 { transaction["expiresDate"]?.int64Value ?? now }

    /// A first purchase: the transaction is the original one and starts the subscription.
    mutating func makeFirstPurchase() {
        transactionId = originalTransactionId
        transaction.set("transactionId", .string(originalTransactionId))
        transaction.set("originalPurchaseDate", .integer(purchaseDate))
        transaction.set("transactionReason", "PURCHASE")
        renewal.set("recentSubscriptionStartDate", .integer(purchaseDate))
    }

    /// The customer bought `product` now (an upgrade takes effect immediately).
    mutating func switchNow(to product: (productId: String, price: Int64)) {
        transaction.set("productId", .string(product.productId))
        transaction.set("price", .integer(product.price))
        transaction.set("transactionReason", "PURCHASE")
        renewal.set("productId", .string(product.productId))
        renewal.set("autoRenewProductId", .string(product.productId))
        renewal.set("renewalPrice", .integer(product.price))
    }

    /// The subscription will renew into `product` at the next renewal date.
    mutating func renewInto(_ product: (productId: String, price: Int64)) {
        renewal.set("autoRenewProductId", .string(product.productId))
        renewal.set("renewalPrice", .integer(product.price))
    }

    /// A period that ended a minute ago.
    mutating func endPeriodRecently() {
        setPeriod(purchaseDate: (now - period - 60_000) / 1000 * 1000)
    }

    /// The App Store took the purchase back: `REFUND_FULL`, `REFUND_PRORATED` or
    /// `FAMILY_REVOKE`, with the share taken back in milliunits (100000 is all of it).
    mutating func revoke(reason: Int64, type: String, percentage: Int64 = 100_000) {
        transaction.insert("revocationReason", .integer(reason), before: "environment")
        transaction.insert("revocationDate", .integer((now - 5_000) / 1000 * 1000), before: "environment")
        transaction.insert("revocationType", .string(type), before: "environment")
        transaction.insert("revocationPercentage", .integer(percentage), before: "environment")
        guard hasRenewal else { return }
        renewal.set("autoRenewStatus", 0)
        status = 5
    }
}
