import StoreRelayVerification
import StoreRelayCore
import Testing

/// The decoded payload shapes from Apple's own App Store Server Library tests.
@Suite("Apple library payload models", .enabled(if: Vectors.available, Vectors.skipMessage))
struct AppleModelTests {
    private func model(_ name: String) throws -> JSONValue {
        try Vectors.json("mock-apple-library/models_\(name).json")
    }

    private func xcodePayload(_ name: String) throws -> JSONValue {
        try JWS.payload(String(decoding: try Vectors.bytes("mock-apple-library/xcode/\(name)"), as: UTF8.self))
    }

    @Test func summaryNotification() throws {
        let payload = try model("signedSummaryNotification")
        let json = try NormalizedEvent(content: try content(payload), receivedAt: fixedReceipt).parsed()
        #expect(json.objectValue?.keys == NormalizedEvent.keys)
        #expect(json["type"] == "RENEWAL_EXTENSION")
        #expect(json["subtype"] == "SUMMARY")
        #expect(json["environment"] == "localtesting")
        #expect(json["id"] == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(json["signedDate"] == .string(isoUTC(milliseconds: 1_698_148_900_000)))
        #expect(json["summary"] == payload["summary"])
        #expect(json["app"] == ["bundleId": "com.example", "appAppleId": 41234, "bundleVersion": nil])
        #expect(json["subscription"] == ["originalTransactionId": nil, "productId": "com.example.product", "status": nil])
        #expect(json["transaction"] == .null && json["renewal"] == .null)
    }

    @Test func externalPurchaseTokenInProduction() throws {
        let payload = try model("signedExternalPurchaseTokenNotification")
        let event = try NormalizedEvent(content: try content(payload), receivedAt: fixedReceipt)
        let json = try event.parsed()
        #expect(event.environment == .production)
        #expect(json["type"] == "EXTERNAL_PURCHASE_TOKEN" && json["subtype"] == "UNREPORTED")
        #expect(json["externalPurchaseToken"] == [
            "externalPurchaseId": "b2158121-7af9-49d4-9561-1f588205523e",
            "tokenCreationDate": .string(isoUTC(milliseconds: 1_698_148_950_000)),
            "appAppleId": 55555,
            "bundleId": "com.example",
        ])
        #expect(json["app"] == ["bundleId": "com.example", "appAppleId": 55555, "bundleVersion": nil])
        #expect(event.bundleId == "com.example")
    }

    @Test func externalPurchaseTokenWithSandboxPrefixIsSandbox() throws {
        let payload = try model("signedExternalPurchaseTokenSandboxNotification")
        let event = try NormalizedEvent(content: try content(payload), receivedAt: fixedReceipt)
        #expect(event.environment == .sandbox)
        #expect(try event.parsed()["environment"] == "sandbox")
        #expect(AppStoreEnvironment.environment(ofPayload: payload) == .sandbox)
    }

    @Test func rescindConsentCarriesAppDataAndTheAppTransaction() throws {
        let payload = try model("signedRescindConsentNotification")
        let appTransaction = try xcodePayload("xcode-signed-app-transaction")
        let json = try NormalizedEvent(content: try content(payload, appTransaction: appTransaction),
                                       receivedAt: fixedReceipt).parsed()
        #expect(json["type"] == "RESCIND_CONSENT" && json["subtype"] == .null)
        #expect(json["environment"] == "localtesting")
        #expect(json["app"] == ["bundleId": "com.example", "appAppleId": 41234, "bundleVersion": nil])
        let converted = try #require(json["appTransaction"]?.objectValue)
        #expect(converted.keys == appTransaction.objectValue?.keys)
        // A fractional millisecond is dropped, never rounded up.
        #expect(converted["receiptCreationDate"] == .string(isoUTC(milliseconds: 1_697_680_122_257)))
        // Xcode's "no date" is year 0000, which ISO-8601 can still spell.
        #expect(converted["originalPurchaseDate"] == "0000-12-30T00:00:00.000Z")
        // Not one of Apple's documented app transaction dates: unchanged.
        #expect(converted["requestDate"] == appTransaction["requestDate"])
        #expect(converted["deviceVerification"] == appTransaction["deviceVerification"])
    }

    @Test func consumptionRequestWithFullTransactionAndRenewal() throws {
        let payload = try model("signedConsumptionRequestNotification")
        let transaction = try model("signedTransaction")
        let renewal = try model("signedRenewalInfo")
        let event = try NormalizedEvent(content: try content(payload, transaction: transaction, renewal: renewal),
                                        receivedAt: fixedReceipt)
        let json = try event.parsed()
        #expect(json["consumptionRequestReason"] == "UNINTENDED_PURCHASE")
        #expect(json["subscription"] == ["originalTransactionId": "12345", "productId": "com.example.product", "status": 1])
        #expect(json["app"] == ["bundleId": "com.example", "appAppleId": 41234, "bundleVersion": "1.2.3"])

        let tx = try #require(json["transaction"]?.objectValue)
        #expect(tx.keys == transaction.objectValue?.keys)
        let txDates: [String: Int64] = [
            "purchaseDate": 1_698_148_900_000, "originalPurchaseDate": 1_698_148_800_000,
            "expiresDate": 1_698_149_000_000, "signedDate": 1_698_148_900_000, "revocationDate": 1_698_148_950_000,
        ]
        for (key, value) in try #require(transaction.objectValue) where !["advancedCommerceInfo", "commitmentInfo"].contains(key) {
            let expected = txDates[key].map { JSONValue.string(isoUTC(milliseconds: $0)) } ?? value
            #expect(tx[key] == expected, "\(key)")
        }
        // Nested objects keep every member, and the dates Apple documents in them are
        // converted too: a refund's and an item's revocation, the commitment's expiry.
        let item = tx["advancedCommerceInfo"]?["items"]?.arrayValue?.first
        #expect(item?["refunds"]?.arrayValue?.first?["refundDate"] == .string(isoUTC(milliseconds: 1_698_149_100_000)))
        #expect(item?["revocationDate"] == .string(isoUTC(milliseconds: 1_698_149_200_000)))
        #expect(item?["price"] == 9990 && item?["SKU"] == "com.example.sku.premium")
        #expect(tx["advancedCommerceInfo"]?["taxExclusivePrice"] == 8490)
        #expect(tx["commitmentInfo"]?["commitmentExpiresDate"] == .string(isoUTC(milliseconds: 1_698_150_000_000)))
        #expect(tx["commitmentInfo"]?["commitmentPrice"] == 119_880)
        #expect(tx["commitmentInfo"]?.objectValue?.keys == transaction["commitmentInfo"]?.objectValue?.keys)

        let rn = try #require(json["renewal"]?.objectValue)
        #expect(rn.keys == renewal.objectValue?.keys)
        let renewalDates: [String: Int64] = [
            "gracePeriodExpiresDate": 1_698_148_900_000, "signedDate": 1_698_148_800_000,
            "recentSubscriptionStartDate": 1_698_148_800_000, "renewalDate": 1_698_148_850_000,
        ]
        for (key, value) in try #require(renewal.objectValue) where key != "commitmentInfo" {
            let expected = renewalDates[key].map { JSONValue.string(isoUTC(milliseconds: $0)) } ?? value
            #expect(rn[key] == expected, "\(key)")
        }
        #expect(rn["commitmentInfo"]?["commitmentRenewalDate"] == .string(isoUTC(milliseconds: 1_698_149_500_000)))
        #expect(rn["commitmentInfo"]?["commitmentRenewalPrice"] == 9990)
    }

    @Test func subscribedInitialBuy() throws {
        let payload = try model("signedNotification")
        let event = try NormalizedEvent(content: try content(payload), receivedAt: fixedReceipt)
        #expect(event.type == "SUBSCRIBED" && event.subtype == "INITIAL_BUY" && event.legacyType == nil)
        #expect(event.environment == .localtesting)
        #expect(try event.parsed()["subscription"]?["status"] == 1)
    }

    @Test func xcodeRenewalInfoWithFractionalDates() throws {
        let renewal = try xcodePayload("xcode-signed-renewal-info")
        let transaction = try xcodePayload("xcode-signed-transaction")
        let payload: JSONValue = [
            "notificationType": "SUBSCRIBED", "subtype": "INITIAL_BUY",
            "notificationUUID": "7f0c1a52-2c8d-4b8e-9a57-6f3a93ab0001",
            "data": ["environment": "Xcode", "bundleId": "com.example.naturelab.backyardbirds.example"],
            "version": "2.0", "signedDate": .number(JSONNumber(text: "1697679936711.0747")!),
        ]
        let json = try NormalizedEvent(content: try content(payload, transaction: transaction, renewal: renewal),
                                       receivedAt: fixedReceipt).parsed()
        #expect(json["environment"] == "xcode")
        #expect(json["signedDate"] == .string(isoUTC(milliseconds: 1_697_679_936_711)))
        #expect(json["renewal"]?["signedDate"] == .string(isoUTC(milliseconds: 1_697_679_936_711)))
        #expect(json["renewal"]?["renewalDate"] == .string(isoUTC(milliseconds: 1_700_358_336_049)))
        #expect(json["transaction"]?["signedDate"] == .string(isoUTC(milliseconds: 1_697_679_936_056)))
        #expect(json["transaction"]?["purchaseDate"] == .string(isoUTC(milliseconds: 1_697_679_936_049)))
    }
}
