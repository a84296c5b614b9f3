import StoreRelayVerification
import StoreRelayCore
import StoreRelaySimulator
import Testing

/// The nested transaction and renewal info say what the notification type says.
@Suite struct NotificationConsistencyTests {
    static let authority = Result { try SimulatorFixtures.authority(clock: WallClock()) }

    struct Decoded {
        let notification: VerifiedNotification
        var transaction: JSONObject { notification.transaction?.payload ?? JSONObject() }
        var renewal: JSONObject { notification.renewal?.payload ?? JSONObject() }
        var status: Int64? { notification.data?["status"]?.int64Value }
    }

    func make(_ type: String, _ subtype: String? = nil, _ environment: AppStoreEnvironment = .sandbox) throws -> Decoded {
        let authority = try Self.authority.get()
        let request = NotificationRequest(type: type, subtype: subtype, environment: environment)
        let notification = try NotificationFactory(authority: authority).make(request)
        return Decoded(notification: try SimulatorFixtures.verifier(trusting: authority).verify(signedPayload: notification.signedPayload))
    }

    @Test func transactionAndRenewalShareTheAppAccountToken() throws {
        let renewed = try make("DID_RENEW")
        let token = try #require(renewed.transaction["appAccountToken"]?.stringValue)
        #expect(token.count == 36)
        #expect(renewed.renewal["appAccountToken"]?.stringValue == token)
    }

    @Test func subscribedAndRenewalStatus() throws {
        let initial = try make("SUBSCRIBED", "INITIAL_BUY")
        #expect(initial.transaction["transactionId"] == initial.transaction["originalTransactionId"])
        #expect(initial.transaction["purchaseDate"] == initial.transaction["originalPurchaseDate"])
        #expect(initial.transaction["transactionReason"]?.stringValue == "PURCHASE")
        #expect(initial.status == 1)
        let resubscribe = try make("SUBSCRIBED", "RESUBSCRIBE")
        #expect(resubscribe.transaction["transactionId"] != resubscribe.transaction["originalTransactionId"])
        #expect(try make("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED").renewal["autoRenewStatus"]?.int64Value == 0)
        #expect(try make("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED").renewal["autoRenewStatus"]?.int64Value == 1)
        let renew = try make("DID_RENEW")
        #expect(renew.transaction["transactionReason"]?.stringValue == "RENEWAL")
        #expect(renew.renewal["renewalDate"] == renew.transaction["expiresDate"])
    }

    @Test func renewalPreferenceChanges() throws {
        let upgrade = try make("DID_CHANGE_RENEWAL_PREF", "UPGRADE")
        #expect(upgrade.transaction["productId"]?.stringValue?.hasSuffix("premiumplus.monthly") == true)
        #expect(upgrade.renewal["autoRenewProductId"] == upgrade.transaction["productId"])
        let downgrade = try make("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE")
        #expect(downgrade.renewal["autoRenewProductId"]?.stringValue?.hasSuffix("basic.monthly") == true)
        #expect(downgrade.renewal["productId"] == downgrade.transaction["productId"])
        let none = try make("DID_CHANGE_RENEWAL_PREF")
        #expect(none.renewal["autoRenewProductId"] == none.renewal["productId"])
        let offer = try make("OFFER_REDEEMED", "UPGRADE")
        #expect(offer.transaction["offerType"]?.int64Value == 2)
        #expect(try make("OFFER_REDEEMED", "INITIAL_BUY").transaction["offerType"]?.int64Value == 3)
    }

    /// Apple's Advanced Commerce API takes descriptions of at most 45 characters and display
    /// names of at most 30; its library refuses longer ones (the MIGRATION description was 49).
    @Test func advancedCommerceDescriptorsFitApplesLimits() throws {
        for type in ["METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE"] {
            let made = try make(type)
            for info in [made.transaction["advancedCommerceInfo"], made.renewal["advancedCommerceInfo"]] {
                let descriptors = [info?["descriptors"]] + (info?["items"]?.arrayValue ?? []).map { Optional($0) }
                for descriptor in descriptors {
                    let description = try #require(descriptor?["description"]?.stringValue)
                    let displayName = try #require(descriptor?["displayName"]?.stringValue)
                    #expect(description.count <= 45, "\(type): \(description)")
                    #expect(displayName.count <= 30, "\(type): \(displayName)")
                }
            }
        }
    }

    @Test func expiryAndBillingFailures() throws {
        for (subtype, intent) in [("VOLUNTARY", 1), ("BILLING_RETRY", 2), ("PRICE_INCREASE", 3), ("PRODUCT_NOT_FOR_SALE", 4)] as [(String, Int64)] {
            let expired = try make("EXPIRED", subtype)
            #expect(expired.status == 2)
            #expect(expired.renewal["expirationIntent"]?.int64Value == intent, "\(subtype)")
            let expires = try #require(expired.transaction["expiresDate"]?.int64Value)
            #expect(expires < (expired.notification.signedDate?.milliseconds ?? 0))
        }
        let voluntary = try make("EXPIRED", "VOLUNTARY").renewal
        #expect(voluntary["autoRenewStatus"]?.int64Value == 0)
        #expect(voluntary["eligibleWinBackOfferIds"] == ["winback_two_months_half_price"])
        #expect(try make("EXPIRED", "BILLING_RETRY").renewal["eligibleWinBackOfferIds"] == nil)
        let retry = try make("DID_FAIL_TO_RENEW")
        #expect(retry.status == 3)
        #expect(retry.renewal["isInBillingRetryPeriod"]?.boolValue == true)
        let grace = try make("DID_FAIL_TO_RENEW", "GRACE_PERIOD")
        #expect(grace.status == 4)
        let graceEnd = try #require(grace.renewal["gracePeriodExpiresDate"]?.int64Value)
        #expect(graceEnd > (grace.notification.signedDate?.milliseconds ?? .max))
        let graceExpired = try make("GRACE_PERIOD_EXPIRED")
        #expect(try #require(graceExpired.renewal["gracePeriodExpiresDate"]?.int64Value) < (graceExpired.notification.signedDate?.milliseconds ?? 0))
        #expect(try make("PRICE_INCREASE", "PENDING").renewal["priceIncreaseStatus"]?.int64Value == 0)
        #expect(try make("PRICE_INCREASE", "ACCEPTED").renewal["priceIncreaseStatus"]?.int64Value == 1)
    }

    @Test func refundsRevocationsAndRequests() throws {
        for type in ["REFUND", "REVOKE"] {
            let revoked = try make(type)
            #expect(revoked.transaction["revocationDate"]?.int64Value != nil, "\(type)")
            #expect(revoked.transaction["revocationReason"]?.int64Value != nil, "\(type)")
            #expect(revoked.status == 5)
        }
        let revoked = try make("REVOKE").transaction
        #expect(revoked["inAppOwnershipType"]?.stringValue == "FAMILY_SHARED")
        #expect(revoked["revocationType"]?.stringValue == "FAMILY_REVOKE")
        #expect(revoked["revocationPercentage"]?.int64Value == 100_000)
        let refunded = try make("REFUND").transaction
        #expect(refunded["revocationType"]?.stringValue == "REFUND_PRORATED")
        let share = try #require(refunded["revocationPercentage"]?.int64Value)
        #expect(share > 0 && share < 100_000, "most of a fresh period is left: \(share)")
        for type in ["REFUND_DECLINED", "REFUND_REVERSED"] {
            #expect(try make(type).transaction["revocationDate"] == nil, "\(type)")
        }
        let consumption = try make("CONSUMPTION_REQUEST")
        #expect(consumption.notification.data?["consumptionRequestReason"]?.stringValue == "UNINTENDED_PURCHASE")
    }

    /// Refund notifications are sent for any In-App Purchase: a consumable's carry its
    /// transaction only, no renewal info and no status.
    @Test func consumableRefundsAndConsumptionRequests() throws {
        let authority = try Self.authority.get()
        let verifier = try SimulatorFixtures.verifier(trusting: authority)
        for type in NotificationRequest.Product.consumableTypes.sorted() {
            var request = NotificationRequest(type: type)
            request.product = .consumable
            let made = try NotificationFactory(authority: authority).make(request)
            let decoded = Decoded(notification: try verifier.verify(signedPayload: made.signedPayload))
            #expect(decoded.transaction["type"]?.stringValue == "Consumable", "\(type)")
            #expect(decoded.notification.renewal == nil && decoded.status == nil, "\(type)")
            #expect((decoded.transaction["revocationType"]?.stringValue == "REFUND_FULL") == (type == "REFUND"), "\(type)")
        }
        var subscriptionOnly = NotificationRequest(type: "DID_RENEW")
        subscriptionOnly.product = .consumable
        #expect(throws: SimulatorError.self) { try subscriptionOnly.validate() }
    }

    @Test func bodiesWithoutData() throws {
        let summary = try make("RENEWAL_EXTENSION", "SUMMARY", .production)
        #expect(summary.notification.data == nil)
        #expect(summary.notification.summary?["environment"]?.stringValue == "Production")
        #expect(summary.notification.summary?["storefrontCountryCodes"]?.arrayValue?.isEmpty == false)
        let token = try make("EXTERNAL_PURCHASE_TOKEN", "CREATED")
        #expect(token.notification.externalPurchaseToken?["tokenType"]?.stringValue == "SERVICES")
        #expect(try make("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED").notification.externalPurchaseToken?["tokenType"] == nil)
        let rescind = try make("RESCIND_CONSENT", nil, .production)
        #expect(rescind.notification.appTransaction?.payload["receiptType"]?.stringValue == "Production")
        #expect(rescind.notification.appData?["signedAppTransactionInfo"]?.stringValue != nil)
        let test = try make("TEST")
        #expect(test.notification.data?.keys == ["appAppleId", "bundleId", "environment"])
    }

    @Test func advancedCommerceTypesCarryTheirInfo() throws {
        for type in ["METADATA_UPDATE", "MIGRATION", "PRICE_CHANGE"] {
            let decoded = try make(type)
            #expect(decoded.transaction["advancedCommerceInfo"]?["items"]?.arrayValue?.count == 1, "\(type)")
            #expect(decoded.renewal["advancedCommerceInfo"]?["consistencyToken"] != nil, "\(type)")
        }
        let change = try make("PRICE_CHANGE")
        let item = change.renewal["advancedCommerceInfo"]?["items"]?.arrayValue?.first
        #expect(item?["priceIncreaseInfo"]?["price"] == change.renewal["renewalPrice"])
        // A migration names the App Store subscription it replaced; nothing else does.
        let migration = try make("MIGRATION")
        let previous = try #require(migration.transaction["previousOriginalTransactionId"]?.stringValue)
        #expect(previous.count == 16 && previous != migration.transaction["originalTransactionId"]?.stringValue)
        #expect(change.transaction["previousOriginalTransactionId"] == nil)
    }

    /// Offer codes on a one-time purchase use Apple's `ONE_TIME` payment mode, the only
    /// `offerDiscountType` outside auto-renewable subscriptions.
    @Test func oneTimeChargesRedeemAOneTimeOfferCode() throws {
        let charge = try make("ONE_TIME_CHARGE")
        #expect(charge.transaction["offerType"]?.int64Value == 3)
        #expect(charge.transaction["offerDiscountType"]?.stringValue == "ONE_TIME")
        #expect(charge.transaction["price"]?.int64Value == 495)
        #expect(try make("DID_RENEW").transaction["offerDiscountType"] == nil)
    }

    /// `--product commitment`: a monthly plan committed for 12 months, as Apple's
    /// transaction and renewal info describe it (billingPlanType, commitmentInfo).
    @Test func commitmentPlansCarryTheirCommitment() throws {
        let authority = try Self.authority.get()
        let verifier = try SimulatorFixtures.verifier(trusting: authority)
        func make(_ type: String, _ subtype: String? = nil) throws -> Decoded {
            var request = NotificationRequest(type: type, subtype: subtype, environment: .production)
            request.product = .commitment
            let made = try NotificationFactory(authority: authority).make(request)
            return Decoded(notification: try verifier.verify(signedPayload: made.signedPayload))
        }
        let renewed = try make("DID_RENEW")
        let transaction = try #require(renewed.transaction["commitmentInfo"]?.objectValue)
        #expect(renewed.transaction["billingPlanType"]?.stringValue == "MONTHLY")
        #expect(transaction["totalBillingPeriods"]?.int64Value == 12)
        // The scenario's subscription started three periods ago: this is the fourth month.
        #expect(transaction["billingPeriodNumber"]?.int64Value == 4)
        #expect(transaction["commitmentPrice"]?.int64Value == 12 * (renewed.transaction["price"]?.int64Value ?? 0))
        let started = try #require(renewed.transaction["originalPurchaseDate"]?.int64Value)
        #expect(transaction["commitmentExpiresDate"]?.int64Value == started + 12 * 30 * 86_400_000)
        let renewal = try #require(renewed.renewal["commitmentInfo"]?.objectValue)
        #expect(renewed.renewal["renewalBillingPlanType"]?.stringValue == "MONTHLY")
        #expect(renewal["commitmentRenewalDate"] == transaction["commitmentExpiresDate"])
        #expect(renewal["commitmentAutoRenewProductId"] == renewed.renewal["autoRenewProductId"])
        #expect(renewal["commitmentRenewalBillingPlanType"]?.stringValue == "MONTHLY")

        #expect(try make("SUBSCRIBED", "INITIAL_BUY").transaction["commitmentInfo"]?["billingPeriodNumber"]?.int64Value == 1)
        #expect(try make("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED").renewal["commitmentInfo"]?["commitmentAutoRenewStatus"]?.int64Value == 0)
        for (type, subtype) in [("TEST", nil), ("ONE_TIME_CHARGE", nil), ("RENEWAL_EXTENSION", "SUMMARY"), ("MIGRATION", nil)] as [(String, String?)] {
            var request = NotificationRequest(type: type, subtype: subtype)
            request.product = .commitment
            #expect(throws: SimulatorError.self, "\(type)") { try request.validate() }
        }
    }
}
