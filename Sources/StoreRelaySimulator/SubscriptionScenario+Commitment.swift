/// A monthly subscription with a 12-month commitment (2026): the customer pays monthly but
/// commits to a year. Apple reports it with `billingPlanType` and a `commitmentInfo` object in
/// the transaction, and `renewalBillingPlanType` and a `commitmentInfo` of its own in the
/// renewal info (JWSTransactionDecodedPayload / JWSRenewalInfoDecodedPayload).
extension SubscriptionScenario {
    static let committedPeriods: Int64 = 12

    mutating func applyCommitment() {
        let monthly = transaction["price"]?.int64Value ?? premium.price
        let started = transaction["originalPurchaseDate"]?.int64Value ?? purchaseDate
        // Which month of the commitment this transaction pays for, from 1.
        let periodNumber = min(Self.committedPeriods, max(1, (purchaseDate - started) / period + 1))
        let commitmentEnds = started + Self.committedPeriods * period
        transaction.insert("billingPlanType", "MONTHLY", before: "environment")
        transaction.insert("commitmentInfo", [
            "billingPeriodNumber": .integer(periodNumber),
            "commitmentExpiresDate": .integer(commitmentEnds),
            "commitmentPrice": .integer(monthly * Self.committedPeriods),
            "totalBillingPeriods": .integer(Self.committedPeriods),
        ], before: "environment")

        let renewalPrice = renewal["renewalPrice"]?.int64Value ?? monthly
        renewal.insert("renewalBillingPlanType", "MONTHLY", before: "signedDate")
        renewal.insert("commitmentInfo", [
            "commitmentAutoRenewProductId": renewal["autoRenewProductId"] ?? .null,
            "commitmentAutoRenewStatus": renewal["autoRenewStatus"] ?? 1,
            "commitmentRenewalBillingPlanType": "MONTHLY",
            "commitmentRenewalDate": .integer(commitmentEnds),
            "commitmentRenewalPrice": .integer(renewalPrice * Self.committedPeriods),
        ], before: "signedDate")
    }
}
