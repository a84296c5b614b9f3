import StoreRelayCore

/// Subscriptions sold through the Advanced Commerce API, which Apple reports with
/// `METADATA_UPDATE`, `MIGRATION` and `PRICE_CHANGE`: the transaction and renewal info carry
/// an `advancedCommerceInfo` object with the developer's own SKUs, descriptors and tax data.
extension SubscriptionScenario {
    mutating func applyAdvancedCommerce(_ type: String) {
        let product = "\(request.bundleId).advanced.subscription"
        let sku = "\(request.bundleId).sku.premium"
        let price = premium.price
        let newPrice = type == "PRICE_CHANGE" ? price + 2000 : price
        let displayName = type == "METADATA_UPDATE" ? "Premium (renamed)" : "Premium"
        let description = type == "MIGRATION" ? "Premium, migrated from the App Store" : "Premium plan"

        transaction.set("productId", .string(product))
        renewal.set("productId", .string(product))
        renewal.set("autoRenewProductId", .string(product))
        renewal.set("renewalPrice", .integer(newPrice))
        if type == "MIGRATION" {
            transaction.set("transactionReason", "PURCHASE")
            // The App Store subscription it replaced (Apple's previousOriginalTransactionId,
            // March 2025): how a downstream joins the two histories.
            let previous = RandomIdentifiers.digits(prefix: request.environment == .production ? "43000" : "200000", length: 16)
            transaction.insert("previousOriginalTransactionId", .string(previous), before: "webOrderLineItemId")
        }

        let taxExclusive = price * 100 / 108
        let transactionInfo: JSONValue = [
            "descriptors": ["description": "Premium plan", "displayName": "Premium"],
            "estimatedTax": .integer(price - taxExclusive),
            "items": [["SKU": .string(sku), "description": "Premium features", "displayName": "Premium", "price": .integer(price)]],
            "period": "P1M",
            "requestReferenceId": .string(RandomIdentifiers.uuid()),
            "taxCode": "C003-00-2",
            "taxExclusivePrice": .integer(taxExclusive),
            "taxRate": "0.08",
        ]
        transaction.insert("advancedCommerceInfo", transactionInfo, before: "environment")

        var item: [(key: String, value: JSONValue)] = [
            (key: "SKU", value: .string(sku)), (key: "description", value: "Premium features"),
            (key: "displayName", value: .string(displayName)), (key: "price", value: .integer(newPrice)),
        ]
        if type == "PRICE_CHANGE" {
            item.append((key: "priceIncreaseInfo", value: ["dependentSKUs": [.string(sku)], "price": .integer(newPrice), "status": "SCHEDULED"]))
        }
        let renewalInfo: JSONValue = [
            "consistencyToken": .string(RandomIdentifiers.uuid()),
            "descriptors": ["description": .string(description), "displayName": .string(displayName)],
            "items": [.object(JSONObject(item))],
            "period": "P1M",
            "requestReferenceId": .string(RandomIdentifiers.uuid()),
            "taxCode": "C003-00-2",
        ]
        renewal.insert("advancedCommerceInfo", renewalInfo, before: "signedDate")
    }
}
