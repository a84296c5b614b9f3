import StoreRelayCore

/// What each notification type and subtype says about the subscription, following Apple's
/// `notificationType` / `subtype` documentation and the real notifications in
/// ../shared/vectors (field order, sandbox periods, which fields appear when).
extension SubscriptionScenario {
    mutating func apply(type: String, subtype: String?) {
        if request.product == .consumable {
            makeOneTimePurchase()
            if type == "REFUND" { revoke(reason: 0, type: "REFUND_FULL") }
            return
        }
        switch (type, subtype) {
        case ("SUBSCRIBED", "INITIAL_BUY"):
            makeFirstPurchase()
        case ("SUBSCRIBED", _):  // RESUBSCRIBE: a new streak of an older subscription
            transaction.set("transactionReason", "PURCHASE")
            transaction.set("originalPurchaseDate", .integer(purchaseDate - 8 * period))
            renewal.set("recentSubscriptionStartDate", .integer(purchaseDate))
        case ("DID_CHANGE_RENEWAL_PREF", "UPGRADE"):
            switchNow(to: premiumPlus)
        case ("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"):
            renewInto(basic)
        case ("DID_CHANGE_RENEWAL_STATUS", let change):
            renewal.set("autoRenewStatus", change == "AUTO_RENEW_DISABLED" ? 0 : 1)
        case ("OFFER_REDEEMED", _):
            applyOfferRedeemed(subtype)
        case ("DID_RENEW", "BILLING_RECOVERY"):
            // The renewal succeeded after failed attempts: a new period starts now.
            renewal.set("recentSubscriptionStartDate", .integer(purchaseDate))
        case ("EXPIRED", _):
            applyExpired(subtype)
        case ("DID_FAIL_TO_RENEW", _):
            endPeriodRecently()
            renewal.insert("expirationIntent", 2, before: "originalTransactionId")
            renewal.insert("isInBillingRetryPeriod", true, before: "renewalPrice")
            if subtype == "GRACE_PERIOD" {
                renewal.insert("gracePeriodExpiresDate", .integer(expiresDate + gracePeriod), before: "renewalPrice")
                status = 4
            } else {
                status = 3
            }
        case ("GRACE_PERIOD_EXPIRED", _):
            // The grace period ended a moment ago; Apple keeps retrying the billing.
            let graceEnd = (now - 2_000) / 1000 * 1000
            setPeriod(purchaseDate: graceEnd - gracePeriod - period)
            renewal.insert("expirationIntent", 2, before: "originalTransactionId")
            renewal.insert("isInBillingRetryPeriod", true, before: "renewalPrice")
            renewal.insert("gracePeriodExpiresDate", .integer(graceEnd), before: "renewalPrice")
            status = 3
        case ("PRICE_INCREASE", let consent):
            renewal.insert("priceIncreaseStatus", consent == "ACCEPTED" ? 1 : 0, before: "renewalPrice")
            renewal.set("renewalPrice", .integer(premium.price + 2000))
        case ("REFUND", _):
            // A subscription refund is prorated by the time left in the period.
            let left = max(0, expiresDate - now) * 100_000 / max(1, expiresDate - purchaseDate)
            revoke(reason: 0, type: "REFUND_PRORATED", percentage: left)
        case ("REVOKE", _):
            // A family member loses access when the purchaser stops sharing or is refunded.
            transaction.set("inAppOwnershipType", "FAMILY_SHARED")
            revoke(reason: 0, type: "FAMILY_REVOKE")
        case ("RENEWAL_EXTENDED", _):
            // Extended by the App Store Server API (up to 90 days; a week here).
            let extensionLength: Int64 = request.environment == .production ? 7 * 86_400_000 : 60_000
            setPeriod(purchaseDate: purchaseDate, length: period + extensionLength)
        case ("ONE_TIME_CHARGE", _):
            makeOneTimePurchase()
            redeemOneTimeOfferCode()
        case ("METADATA_UPDATE", _), ("MIGRATION", _), ("PRICE_CHANGE", _):
            applyAdvancedCommerce(type)
        default:
            // DID_RENEW, DID_CHANGE_RENEWAL_PREF without subtype, REFUND_DECLINED,
            // REFUND_REVERSED, CONSUMPTION_REQUEST, RENEWAL_EXTENSION/FAILURE: an active,
            // renewing subscription is what they report.
            break
        }
        if request.product == .commitment, hasRenewal { applyCommitment() }
    }

    private mutating func applyOfferRedeemed(_ subtype: String?) {
        // Offer codes (type 3) are what customers redeem to (re)subscribe; promotional
        // offers (type 2) are redeemed on an active subscription.
        let codeOffer = subtype == "INITIAL_BUY" || subtype == "RESUBSCRIBE"
        let offer: [(String, JSONValue)] = codeOffer
            ? [("offerType", 3), ("offerIdentifier", "SPRING_FREE_MONTH"), ("offerDiscountType", "FREE_TRIAL"), ("offerPeriod", "P1M")]
            : [("offerType", 2), ("offerIdentifier", "loyalty_half_price"), ("offerDiscountType", "PAY_AS_YOU_GO"), ("offerPeriod", "P3M")]
        switch subtype {
        case "INITIAL_BUY": makeFirstPurchase()
        case "RESUBSCRIBE":
            transaction.set("transactionReason", "PURCHASE")
            renewal.set("recentSubscriptionStartDate", .integer(purchaseDate))
        case "UPGRADE": switchNow(to: premiumPlus)
        case "DOWNGRADE": renewInto(basic)
        default: break
        }
        if subtype != "DOWNGRADE" {
            // The offer applies to the transaction now; a downgrade's at the next renewal.
            for (key, value) in offer { transaction.insert(key, value, before: "environment") }
            let discounted = codeOffer ? 0 : (transaction["price"]?.int64Value ?? premium.price) / 2
            transaction.set("price", .integer(discounted))
        }
        for (key, value) in offer where key != "offerPeriod" { renewal.insert(key, value, before: "renewalPrice") }
    }

    private mutating func applyExpired(_ subtype: String?) {
        endPeriodRecently()
        status = 2
        // expirationIntent: 1 voluntary, 2 billing error, 3 no consent to a price increase,
        // 4 product not for sale (Apple's `expirationIntent`).
        let intent: Int64
        switch subtype {
        case "BILLING_RETRY": intent = 2
        case "PRICE_INCREASE": intent = 3
        case "PRODUCT_NOT_FOR_SALE": intent = 4
        default: intent = 1
        }
        renewal.insert("expirationIntent", .integer(intent), before: "originalTransactionId")
        renewal.set("autoRenewStatus", intent == 1 || intent == 3 ? 0 : 1)
        renewal.insert("isInBillingRetryPeriod", false, before: "renewalPrice")
        if intent == 1 {
            // A customer who left may be offered a win-back offer to return.
            renewal.insert("eligibleWinBackOfferIds", ["winback_two_months_half_price"], before: "appTransactionId")
        }
        if intent == 3 {
            renewal.insert("priceIncreaseStatus", 0, before: "renewalPrice")
            renewal.set("renewalPrice", .integer(premium.price + 2000))
        }
    }

    /// Offer codes exist for every product type (Apple's `offerType` 3); on a one-time
    /// purchase their payment mode is `ONE_TIME`, Apple's only `offerDiscountType` outside
    /// auto-renewable subscriptions.
    mutating func redeemOneTimeOfferCode() {
        transaction.insert("offerType", 3, before: "environment")
        transaction.insert("offerIdentifier", "COINS_LAUNCH_HALF_PRICE", before: "environment")
        transaction.insert("offerDiscountType", "ONE_TIME", before: "environment")
        transaction.set("price", .integer((transaction["price"]?.int64Value ?? 0) / 2))
    }

    /// A consumable bought once: no subscription fields, no renewal info, no status.
    mutating func makeOneTimePurchase() {
        let purchase = purchaseDate
        transaction = OrderedFields([
            ("transactionId", .string(originalTransactionId)),
            ("originalTransactionId", .string(originalTransactionId)),
            ("bundleId", .string(request.bundleId)),
            ("productId", .string("\(request.bundleId).coins.100")),
            ("purchaseDate", .integer(purchase)),
            ("originalPurchaseDate", .integer(purchase)),
            ("quantity", 1),
            ("type", "Consumable"),
            ("inAppOwnershipType", "PURCHASED"),
            ("signedDate", .integer(now)),
            ("environment", .string(request.appleEnvironment)),
            ("transactionReason", "PURCHASE"),
            ("storefront", "USA"),
            ("storefrontId", "143441"),
            ("price", 990),
            ("currency", "USD"),
            ("appTransactionId", .string(appTransactionId)),
        ])
        hasRenewal = false
    }
}
