import Testing
import StoreRelayGooglePlay
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// Push bodies and DeveloperNotifications as Google writes them, every notification type's
/// name, and the event they become.
@Suite struct DeveloperNotificationTests {
    let received = Timestamp(milliseconds: 1_800_000_000_123)

    static let subscriptionNames: [Int: String] = [
        1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
        5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED",
        8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED",
        11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED", 13: "SUBSCRIPTION_EXPIRED",
        14: "SUBSCRIPTION_NOTIFICATION_14", 15: "SUBSCRIPTION_NOTIFICATION_15", 16: "SUBSCRIPTION_NOTIFICATION_16",
        17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED", 19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
        20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 21: "SUBSCRIPTION_NOTIFICATION_21",
        22: "SUBSCRIPTION_PRICE_STEP_UP_CONSENT_UPDATED", 99: "SUBSCRIPTION_NOTIFICATION_99",
    ]

    func push(_ data: String, id: String = "136969346945") throws -> (PubSubPush, DeveloperNotification) {
        let push = try PubSubPush.parse(Array(PlayPushSigner.body(messageId: id, data: data).utf8))
        return (push, try DeveloperNotification.parse(push.data))
    }

    @Test func everySubscriptionTypeHasItsName() throws {
        for (type, name) in Self.subscriptionNames {
            let (_, notification) = try push(PlayPushSigner.subscriptionNotification(type: type))
            #expect(notification.typeName == name, "type \(type)")
        }
    }

    @Test func oneTimeVoidedAndTestKindsHaveTheirNames() throws {
        #expect(try push(PlayPushSigner.oneTimeProductNotification(type: 1)).1.typeName == "ONE_TIME_PRODUCT_PURCHASED")
        #expect(try push(PlayPushSigner.oneTimeProductNotification(type: 2)).1.typeName == "ONE_TIME_PRODUCT_CANCELED")
        #expect(try push(PlayPushSigner.oneTimeProductNotification(type: 7)).1.typeName == "ONE_TIME_PRODUCT_NOTIFICATION_7")
        #expect(try push(PlayPushSigner.voidedPurchaseNotification()).1.typeName == "VOIDED_PURCHASE")
        #expect(try push(PlayPushSigner.testNotification()).1.typeName == "TEST")
    }

    @Test func readsThePushAsPubSubWritesIt() throws {
        let (push, notification) = try push(PlayPushSigner.subscriptionNotification(type: 2, eventTime: 1_700_000_000_456))
        #expect(push.messageId == "136969346945")
        #expect(push.publishTime == "2026-11-20T10:15:30.123Z")
        #expect(push.subscription == "projects/acme/subscriptions/play-push")
        #expect(notification.packageName == PlayPushSigner.package)
        #expect(notification.eventTime == Timestamp(milliseconds: 1_700_000_000_456))
        #expect(notification.kind == .subscription(version: "1.0", notificationType: 2, purchaseToken: "purchase-token-1",
                                                   subscriptionId: "premium.monthly"))
        // message_id alone (the snake-case spelling) and eventTimeMillis as a number are read too.
        let snake = #"{"message":{"data":"\#(Base64.encode(Array(PlayPushSigner.testNotification().utf8)))","message_id":"42"}}"#
        #expect(try PubSubPush.parse(Array(snake.utf8)).messageId == "42")
        let numeric = #"{"packageName":"a.b","eventTimeMillis":1700000000000,"testNotification":{"version":"1.0"}}"#
        #expect(try DeveloperNotification.parse(Array(numeric.utf8)).eventTime == Timestamp(milliseconds: 1_700_000_000_000))
    }

    @Test func refusesWhatIsNoPushOrNoNotification() {
        let data = Base64.encode(Array(PlayPushSigner.testNotification().utf8))
        for body in ["", "{}", "[]", "not json", #"{"message":"x"}"#, #"{"message":{"data":"\#(data)"}}"#,
                     #"{"message":{"data":"\#(data)","messageId":""}}"#, #"{"message":{"data":"\#(data)","messageId":7}}"#,
                     #"{"message":{"data":"%%%","messageId":"1"}}"#, #"{"message":{"messageId":"1"}}"#,
                     #"{"message":{"data":"\#(data)","messageId":"1\n2"}}"#,
                     #"{"message":{"data":"\#(data)","messageId":"\#(String(repeating: "9", count: 200))"}}"#,
                     #"{"message":{"data":"\#(data)","messageId":"1","messageId":"2"}}"#,
                     #"{"message":{"data":"\#(data)","messageId":"1","attributes":[]}}"#] {
            #expect(throws: GooglePlayError.self, "\(body)") { try PubSubPush.parse(Array(body.utf8)) }
        }
        for data in ["", "null", "[]", #"{"packageName":"a.b"}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"x","testNotification":{}}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"-1","testNotification":{}}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"1"}"#,
                     #"{"packageName":"","eventTimeMillis":"1","testNotification":{}}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"1","testNotification":{},"subscriptionNotification":{}}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"1","testNotification":"x"}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"1","subscriptionNotification":{"notificationType":2,"purchaseToken":"t"}}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"1","subscriptionNotification":{"notificationType":"two","purchaseToken":"t","subscriptionId":"s"}}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"1","oneTimeProductNotification":{"notificationType":1,"purchaseToken":"t"}}"#,
                     #"{"packageName":"a.b","eventTimeMillis":"1","voidedPurchaseNotification":{"orderId":"o"}}"#] {
            #expect(throws: GooglePlayError.self, "\(data)") { try DeveloperNotification.parse(Array(data.utf8)) }
        }
    }

    /// A kind Google adds after this build (the reference already lists
    /// `pendingRefundReviewNotification`) passes through under a name of Google's shape, as an
    /// unknown Apple type does, rather than being quarantined.
    @Test func aKindThisBuildDoesNotKnowPassesThrough() throws {
        let data = #"{"version":"1.0","packageName":"a.b","eventTimeMillis":"1","pendingRefundReviewNotification":{"purchaseToken":"t-9","refundReviewState":2}}"#
        let notification = try DeveloperNotification.parse(Array(data.utf8))
        #expect(notification.typeName == "PENDING_REFUND_REVIEW")
        #expect(notification.purchaseToken == "t-9")
        let push = try PubSubPush.parse(Array(PlayPushSigner.body(messageId: "77", data: data).utf8))
        let event = PlayEvent.normalize(push: push, notification: notification, receivedAt: received)
        #expect(event.type == "PENDING_REFUND_REVIEW")
        #expect(event.json["transaction"]?["refundReviewState"]?.int64Value == 2)
        #expect(event.json["subscription"]?["originalTransactionId"]?.stringValue == "t-9")
        // A known kind wins over an unknown one beside it; two unknown ones, or a member that
        // is not an object or not of that shape, are still no notification.
        let both = #"{"packageName":"a.b","eventTimeMillis":"1","testNotification":{},"fooNotification":{}}"#
        #expect(try DeveloperNotification.parse(Array(both.utf8)).typeName == "TEST")
        for refused in [#"{"packageName":"a.b","eventTimeMillis":"1","fooNotification":{},"barNotification":{}}"#,
                        #"{"packageName":"a.b","eventTimeMillis":"1","fooNotification":"x"}"#,
                        #"{"packageName":"a.b","eventTimeMillis":"1","Notification":{}}"#,
                        #"{"packageName":"a.b","eventTimeMillis":"1","FooNotification":{}}"#,
                        #"{"packageName":"a.b","eventTimeMillis":"1","foo-barNotification":{}}"#] {
            #expect(throws: GooglePlayError.self, "\(refused)") { try DeveloperNotification.parse(Array(refused.utf8)) }
        }
    }

    @Test func normalizesIntoTheSharedSchema() throws {
        let (push, notification) = try push(PlayPushSigner.subscriptionNotification(type: 2, eventTime: 1_700_000_000_456))
        let event = PlayEvent.normalize(push: push, notification: notification, receivedAt: received)
        let json = event.json
        #expect(json.keys == NormalizedEvent.keys)
        #expect(event.id == "136969346945")
        #expect(json["source"] == "googleplay")
        #expect(json["type"] == "SUBSCRIPTION_RENEWED")
        #expect(json["environment"] == "production")
        #expect(json["version"] == "1.0")
        #expect(json["signedDate"] == "2023-11-14T22:13:20.456Z")
        #expect(json["receivedAt"] == .string(received.iso8601))
        #expect(json["app"]?["bundleId"] == "com.acme.journal")
        #expect(json["transaction"]?["purchaseToken"] == "purchase-token-1")
        #expect(json["transaction"]?["productId"] == "premium.monthly")
        #expect(json["transaction"]?["notificationType"] == 2)
        #expect(json["subscription"]?["originalTransactionId"] == "purchase-token-1")
        #expect(json["extra"]?["messageId"] == "136969346945")
        #expect(json["extra"]?["developerNotification"]?["packageName"] == "com.acme.journal")
        #expect(json["raw"] == .null)
        #expect(event.bundleId == "com.acme.journal")
        #expect(event.originalTransactionId == "purchase-token-1")
        #expect(event.environment == .production)
        // Stored and read back (the journal's path), it is the same event.
        #expect(try NormalizedEvent(storedJSON: event.jsonBytes()) == event)

        let (voidPush, voided) = try self.push(PlayPushSigner.voidedPurchaseNotification(), id: "9")
        let voidedEvent = PlayEvent.normalize(push: voidPush, notification: voided, receivedAt: received)
        #expect(voidedEvent.transactionId == "GPA.1234-5678-9012-34567")
        #expect(voidedEvent.json["transaction"]?["refundType"] == 1)
        let (testPush, test) = try self.push(PlayPushSigner.testNotification(), id: "10")
        let testEvent = PlayEvent.normalize(push: testPush, notification: test, receivedAt: received)
        #expect(testEvent.json["transaction"] == .null)
        #expect(testEvent.json["subscription"]?["originalTransactionId"] == .null)
    }

    @Test func enrichmentAttachesTheAnswerAndTheTestMarker() throws {
        let (push, notification) = try push(PlayPushSigner.subscriptionNotification(type: 4))
        let event = PlayEvent.normalize(push: push, notification: notification, receivedAt: received)
        let answer = try #require(try JSONValue.parse(#"{"kind":"androidpublisher#subscriptionPurchaseV2","subscriptionState":"SUBSCRIPTION_STATE_ACTIVE","testPurchase":{}}"#).objectValue)
        let enriched = PlayEvent.enriched(event, with: answer)
        #expect(enriched.id == event.id)
        #expect(enriched.environment == .sandbox)
        #expect(enriched.json["subscription"]?["subscriptionState"] == "SUBSCRIPTION_STATE_ACTIVE")
        #expect(enriched.json["subscription"]?["originalTransactionId"] == "purchase-token-1")
        #expect(enriched.json["subscription"]?["productId"] == "premium.monthly")
        #expect(enriched.json.keys == NormalizedEvent.keys)
        let production = try #require(try JSONValue.parse(#"{"purchaseState":0,"purchaseType":1}"#).objectValue)
        #expect(PlayEvent.enriched(event, with: production).environment == .production)
        #expect(PlayEvent.isTestPurchase(try #require(try JSONValue.parse(#"{"purchaseType":0}"#).objectValue)))
    }
}
