import Foundation
import StoreRelayVerification
import StoreRelayCore
import Testing

@Suite("V1 notifications")
struct V1NotificationTests {
    static let realFile = "v1/imdhemy_server-notification_DID_CHANGE_RENEWAL_STATUS.json"

    @Test(.enabled(if: Vectors.available, Vectors.skipMessage))
    func realBodyNormalizesWithTheExpectedFacts() throws {
        let body = try Vectors.bytes(Self.realFile)
        let v1 = try V1Notification.parse(body)
        #expect(v1.notificationType == "DID_CHANGE_RENEWAL_STATUS")
        #expect(v1.password == "********")
        #expect(v1.bundleId == "com.some.thing")
        // The capture's publisher edited PROD to "Production"; both spellings mean production.
        #expect(v1.environment == .production)

        let event = v1.normalized(receivedAt: fixedReceipt)
        let json = try event.parsed()
        #expect(json.objectValue?.keys == NormalizedEvent.keys)
        #expect(event.type == "DID_CHANGE_RENEWAL_STATUS" && event.subtype == "AUTO_RENEW_DISABLED")
        #expect(json["legacyType"] == "DID_CHANGE_RENEWAL_STATUS")
        #expect(json["version"] == "1.0" && json["source"] == "appstore")
        #expect(json["environment"] == "production")
        #expect(json["signedDate"] == .null)
        #expect(json["app"] == ["bundleId": "com.some.thing", "appAppleId": nil, "bundleVersion": "34"])
        #expect(json["subscription"] == [
            "originalTransactionId": "1000000723811158", "productId": "one_month_subscription", "status": nil,
        ])
        #expect(json["renewal"] == [
            "isInBillingRetryPeriod": false, "autoRenewStatus": 0, "originalTransactionId": "1000000723811158",
            "productId": "one_month_subscription", "expirationIntent": 1, "autoRenewProductId": "one_month_subscription",
        ])
        // The newest of the 54 receipt entries, in V2's member names.
        let tx = try #require(json["transaction"]?.objectValue)
        #expect(tx["transactionId"] == "1000000746095599")
        #expect(tx["productId"] == "one_month_subscription")
        #expect(tx["purchaseDate"] == .string(isoUTC(milliseconds: 1_606_292_762_000)))
        #expect(tx["originalPurchaseDate"] == .string(isoUTC(milliseconds: 1_606_292_727_000)))
        #expect(tx["expiresDate"] == .string(isoUTC(milliseconds: 1_606_293_062_000)))
        #expect(tx["quantity"] == 1)
        #expect(tx["webOrderLineItemId"] == "1000000057713932")
        #expect(tx["subscriptionGroupIdentifier"] == "20667927")
        #expect(tx["isTrialPeriod"] == false)
        #expect(!tx.keys.contains { $0.contains("_") }, "snake_case left: \(tx.keys)")

        // The id is the body's SHA-256 (the manifest lists it) cut to a UUID.
        let sha = try #require(try Vectors.manifestEntry(Self.realFile)?["sha256"]?.stringValue)
        let hex = Array(sha.prefix(32))
        let uuid = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(hex[$0]) }.joined(separator: "-")
        #expect(event.id == uuid)
        #expect(json["id"] == .string(uuid))

        try expectNoSecret(in: event, body: body, secret: "********")
    }

    @Test func newestReceiptOfTheNotifiedSubscriptionIsChosen() throws {
        let receipts: [JSONValue] = [
            V1Bodies.receipt(transactionId: "old", purchaseMs: 1_600_000_000_000),
            V1Bodies.receipt(transactionId: "other-sub-newest", originalTransactionId: "9", productId: "yearly",
                             purchaseMs: 1_700_000_000_000),
            V1Bodies.receipt(transactionId: "newest", purchaseMs: 1_650_000_000_000),
            V1Bodies.receipt(transactionId: "middle", purchaseMs: 1_620_000_000_000),
        ]
        let pending = [V1Bodies.pending(originalTransactionId: "9", productId: "yearly"), V1Bodies.pending()]
        let targeted = V1Bodies.body(type: "DID_RENEW", receipts: receipts, pending: pending,
                                     top: [("original_transaction_id", "1000000000000001")])
        let json = try V1Notification.parse(V1Bodies.bytes(targeted)).normalized(receivedAt: fixedReceipt).parsed()
        #expect(json["transaction"]?["transactionId"] == "newest")
        #expect(json["renewal"]?["originalTransactionId"] == "1000000000000001")
        #expect(json["subscription"]?["productId"] == "monthly")

        // Without a top-level id, the newest entry overall wins, with its own renewal info.
        let untargeted = V1Bodies.body(type: "DID_RENEW", receipts: receipts, pending: pending)
        let all = try V1Notification.parse(V1Bodies.bytes(untargeted)).normalized(receivedAt: fixedReceipt).parsed()
        #expect(all["transaction"]?["transactionId"] == "other-sub-newest")
        #expect(all["renewal"]?["productId"] == "yearly")
        #expect(all["subscription"] == ["originalTransactionId": "9", "productId": "yearly", "status": nil])
    }

    /// Top-level members the event has no key for travel in `extra` as Apple sent them, as a
    /// V2 payload's do; the password, and what the event carries, never.
    @Test func unmappedTopLevelMembersGoInExtra() throws {
        let body = V1Bodies.body(type: "DID_CHANGE_RENEWAL_STATUS", top: [
            ("auto_renew_status", "false"),
            ("auto_renew_status_change_date_ms", "1606292800000"),
            ("auto_renew_status_change_date", "2020-11-25 08:26:40 Etc/GMT"),
            ("expiration_intent", "1"),
            ("a_member_apple_adds_later", ["nested": 1]),
        ])
        let json = try V1Notification.parse(V1Bodies.bytes(body)).normalized(receivedAt: fixedReceipt).parsed()
        let extra = try #require(json["extra"]?.objectValue)
        #expect(extra.keys == ["auto_renew_status", "auto_renew_status_change_date_ms", "auto_renew_status_change_date",
                               "expiration_intent", "a_member_apple_adds_later"])
        #expect(extra["auto_renew_status_change_date_ms"] == "1606292800000")
        #expect(extra["a_member_apple_adds_later"] == ["nested": 1])
        let bare = try V1Notification.parse(V1Bodies.bytes(V1Bodies.body(type: "DID_RENEW"))).normalized(receivedAt: fixedReceipt)
        #expect(try bare.parsed()["extra"] == .null)
        #expect(!String(decoding: bare.jsonBytes(), as: UTF8.self).contains(V1Bodies.secret))
    }

    @Test func receiptFieldsGetTheirV2NamesAndTypes() throws {
        var receipt = try #require(V1Bodies.receipt(transactionId: "7", purchaseMs: 1_606_292_762_000).objectValue)
        receipt["cancellation_date_ms"] = "1606292800000"
        receipt["cancellation_date"] = "2020-11-25 08:26:40 Etc/GMT"
        receipt["cancellation_reason"] = "1"
        receipt["promotional_offer_id"] = "promo"
        let pending = V1Bodies.pending(extra: [
            ("grace_period_expires_date_ms", "1606300000000"), ("grace_period_expires_date_pst", "x"),
            ("price_consent_status", "1"), ("is_in_billing_retry_period", "true"),
        ])
        let body = V1Bodies.body(type: "CANCEL", receipts: [.object(receipt)], pending: [pending])
        let json = try V1Notification.parse(V1Bodies.bytes(body)).normalized(receivedAt: fixedReceipt).parsed()
        let tx = try #require(json["transaction"]?.objectValue)
        #expect(tx["revocationDate"] == .string(isoUTC(milliseconds: 1_606_292_800_000)))
        #expect(tx["revocationReason"] == 1)
        #expect(tx["isUpgraded"] == true)
        #expect(tx["inAppOwnershipType"] == "PURCHASED")
        #expect(tx["promotionalOfferId"] == "promo")
        for dropped in ["purchaseDatePst", "cancellationDate", "expiresDatePst", "purchase_date"] {
            #expect(tx[dropped] == nil, "\(dropped)")
        }
        let renewal = try #require(json["renewal"]?.objectValue)
        #expect(renewal["gracePeriodExpiresDate"] == .string(isoUTC(milliseconds: 1_606_300_000_000)))
        #expect(renewal["gracePeriodExpiresDatePst"] == nil)
        #expect(renewal["priceIncreaseStatus"] == 1)
        #expect(renewal["isInBillingRetryPeriod"] == true)
        #expect(renewal["autoRenewStatus"] == 1)
    }

    @Test func environmentSpellings() throws {
        for (name, expected) in [("PROD", "production"), ("Sandbox", "sandbox"), ("Production", "production")] {
            let body = V1Bodies.body(type: "DID_RENEW", top: [("environment", .string(name))])
            let json = try V1Notification.parse(V1Bodies.bytes(body)).normalized(receivedAt: fixedReceipt).parsed()
            #expect(json["environment"] == .string(expected))
        }
        var noTop = V1Bodies.body(type: "DID_RENEW")
        noTop["environment"] = nil
        #expect(try V1Notification.parse(V1Bodies.bytes(noTop)).environment == .sandbox)
        let bad = V1Bodies.body(type: "DID_RENEW", top: [("environment", "Staging")])
        let error = #expect(throws: EventError.self) { try V1Notification.parse(V1Bodies.bytes(bad)) }
        #expect(error?.code == .unknownEnvironment)
    }

    @Test func malformedBodiesAreRejected() {
        let cases: [(String, EventError.Code)] = [
            ("", .malformedJSON), ("{", .malformedJSON), ("[]", .notAnObject), (#"{"password":"x"}"#, .missingField),
            (#"{"notification_type":7,"environment":"PROD"}"#, .missingField),
            (#"{"notification_type":"","environment":"PROD"}"#, .missingField),
            (#"{"notification_type":"DID_RENEW"}"#, .missingField),
        ]
        for (text, code) in cases {
            let error = #expect(throws: EventError.self) { try V1Notification.parse(Array(text.utf8)) }
            #expect(error?.code == code, "\(text)")
        }
    }

    @Test func idIsAStableUUIDShapedHashOfTheExactBytes() throws {
        let object = V1Bodies.body(type: "DID_RENEW")
        let bytes = V1Bodies.bytes(object)
        let first = try V1Notification.parse(bytes).normalized(receivedAt: fixedReceipt)
        let again = try V1Notification.parse(bytes).normalized(receivedAt: Timestamp(milliseconds: 5))
        #expect(first.id == again.id)
        #expect(first.id.range(of: "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
                               options: .regularExpression) != nil)
        // Same JSON, one more space: a different body, so a different id.
        let spaced = Array(" ".utf8) + bytes
        #expect(try V1Notification.parse(spaced).eventID != first.id)
        let other = V1Bodies.bytes(V1Bodies.body(type: "DID_RECOVER"))
        #expect(try V1Notification.parse(other).eventID != first.id)
        #expect(V1Notification.eventID(ofBody: []) == "e3b0c442-98fc-1c14-9afb-f4c8996fb924")
    }

    @Test func passwordNeverReachesTheEvent() throws {
        var object = V1Bodies.body(type: "INITIAL_BUY")
        // Even a password member misplaced inside a receipt entry is dropped.
        var receipt = try #require(V1Bodies.receipt(transactionId: "1", purchaseMs: 1).objectValue)
        receipt["password"] = .string(V1Bodies.secret)
        object["unified_receipt"] = ["latest_receipt_info": [.object(receipt)], "pending_renewal_info": []]
        let body = V1Bodies.bytes(object)
        let event = try V1Notification.parse(body).normalized(receivedAt: fixedReceipt)
        try expectNoSecret(in: event, body: body, secret: V1Bodies.secret)
    }
}

/// Neither the stored event nor the include-raw form carries the secret or a password member.
func expectNoSecret(in event: NormalizedEvent, body: [UInt8], secret: String) throws {
    for bytes in [event.jsonBytes(), event.jsonBytes(includingRaw: body)] {
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(!text.contains(secret))
        #expect(!text.contains("\"password\""))
        #expect(!text.contains("\\\"password\\\""))
    }
    let raw = try #require(try JSONValue.parse(event.jsonBytes(includingRaw: body))["raw"]?.stringValue)
    let rawBody = try JSONValue.parse(raw)
    #expect(rawBody["password"] == nil)
    #expect(rawBody["notification_type"] != nil)
}
