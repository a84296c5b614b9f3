import StoreRelayVerification
import StoreRelayCore

/// A Google Play push as the shared event schema (SPEC "Normalized event", "Google Play
/// real-time developer notifications"): every key present, `source` `googleplay`.
///
/// - `id`: the Pub/Sub `messageId`, exactly as sent (Pub/Sub redelivers with the same one,
///   so it is the dedupe key). A body that is no push has none: its id is a UUID-shaped
///   SHA-256 of the body, as a V1 body's is.
/// - `type`: the notification's name (`PlayNotificationTypes`); `subtype`, `legacyType` null.
/// - `version`: the DeveloperNotification's `version` (`"1.0"`).
/// - `environment`: `production`; the Developer API's test-purchase marker makes it
///   `sandbox` (`enriched(_:with:)`).
/// - `signedDate`: `eventTimeMillis`; `app.bundleId`: the package name.
/// - `transaction`: `purchaseToken`, `productId` (the subscription id or sku), the kind's own
///   fields (`subscriptionId`/`sku`, `notificationType`, `orderId`, `productType`,
///   `refundType`) and `transactionId` = `orderId` when Google sends one (voided purchases).
/// - `subscription`: `originalTransactionId` = the purchase token (Play's stable id of a
///   purchase, so search and a subscription's timeline work as for Apple), `productId`,
///   `status` null; with enrichment, the Developer API's answer is merged in.
/// - `extra`: the push's `messageId`, `publishTime`, `subscription`, `attributes` and the
///   whole decoded `developerNotification`.
public enum PlayEvent {
    public static let source = "googleplay"

    /// The event of a verified push.
    public static func normalize(push: PubSubPush, notification: DeveloperNotification, receivedAt: Timestamp) -> NormalizedEvent {
        var transaction: [JSONObject.Member] = []
        var productId: JSONValue = .null
        switch notification.kind {
        case .subscription(let version, let type, let token, let subscriptionId):
            productId = .string(subscriptionId)
            transaction = [("purchaseToken", .string(token)), ("productId", productId), ("subscriptionId", productId),
                           ("notificationType", .integer(type)), ("version", .string(version))]
        case .oneTimeProduct(let version, let type, let token, let sku):
            productId = .string(sku)
            transaction = [("purchaseToken", .string(token)), ("productId", productId), ("sku", productId),
                           ("notificationType", .integer(type)), ("version", .string(version))]
        case .voidedPurchase(let token, let orderId, let productType, let refundType):
            transaction = [("purchaseToken", .string(token)), ("productId", .null), ("transactionId", .string(orderId)),
                           ("orderId", .string(orderId)), ("productType", productType.map { .integer($0) } ?? .null),
                           ("refundType", refundType.map { .integer($0) } ?? .null)]
        case .test:
            break
        case .other(_, let object):
            // As Google sent it: a downstream that knows the kind reads it.
            transaction = object.members
        }
        let token: JSONValue = notification.purchaseToken.map { .string($0) } ?? .null
        let subscription = JSONObject([("originalTransactionId", token), ("productId", productId), ("status", .null)])
        var extra = pushMetadata(push)
        extra.append(("developerNotification", .object(notification.json)))
        return event(id: push.messageId, version: notification.version, type: notification.typeName,
                     packageName: .string(notification.packageName), signedDate: .string(notification.eventTime.iso8601),
                     receivedAt: receivedAt, subscription: subscription,
                     transaction: transaction.isEmpty ? .null : .object(JSONObject(transaction)), extra: JSONObject(extra))
    }

    /// The event of an authenticated push whose body could not be read as a Play
    /// notification, for the quarantine: `type` `UNREADABLE`, the package when it is known,
    /// the reason in `extra.error`. The body itself is stored beside it.
    public static func unreadable(body: [UInt8], push: PubSubPush?, packageName: String?, reason: String,
                                  receivedAt: Timestamp) -> NormalizedEvent {
        var extra = push.map(pushMetadata) ?? []
        extra.append(("error", .string(reason)))
        return event(id: push?.messageId ?? V1Notification.eventID(ofBody: body), version: nil, type: "UNREADABLE",
                     packageName: packageName.map { .string($0) } ?? .null, signedDate: .null, receivedAt: receivedAt,
                     subscription: JSONObject([("originalTransactionId", .null), ("productId", .null), ("status", .null)]),
                     transaction: .null, extra: JSONObject(extra))
    }

    // MARK: - Enrichment seam

    /// `event` with the Play Developer API's answer for its purchase
    /// (`purchases.subscriptionsv2.get` or `purchases.products.get`): the answer's members
    /// become `subscription` (keeping `originalTransactionId` and `productId` unless the
    /// answer has its own), and `environment` becomes `sandbox` when the answer marks a test
    /// purchase (`isTestPurchase`). Everything else is unchanged; the id stays, so a
    /// downstream sees one event.
    ///
    /// Routes are decided from the environment: a caller that enriches before fan-out routes
    /// the returned event, not the one accepted.
    public static func enriched(_ event: NormalizedEvent, with answer: JSONObject) -> NormalizedEvent {
        var object = event.json
        var subscription = answer
        let kept = object["subscription"]?.objectValue ?? JSONObject()
        for key in ["productId", "originalTransactionId"] where subscription[key] == nil {
            if let value = kept[key] { subscription = JSONObject([(key, value)] + subscription.members) }
        }
        object["subscription"] = .object(subscription)
        object["environment"] = .string(isTestPurchase(answer) ? AppStoreEnvironment.sandbox.rawValue : AppStoreEnvironment.production.rawValue)
        // Built from an event this gateway made: id, type and environment are present.
        return (try? NormalizedEvent(storedObject: object)) ?? event
    }

    /// Whether a Developer API answer is a license tester's purchase: `testPurchase` present
    /// (SubscriptionPurchaseV2) or `purchaseType` 0 (ProductPurchase).
    public static func isTestPurchase(_ answer: JSONObject) -> Bool {
        if let test = answer["testPurchase"], !test.isNull { return true }
        return answer["purchaseType"]?.int64Value == 0
    }

    // MARK: - Layout

    private static func pushMetadata(_ push: PubSubPush) -> [JSONObject.Member] {
        [("messageId", .string(push.messageId)), ("publishTime", .string(push.publishTime)),
         ("subscription", .string(push.subscription)), ("attributes", push.attributes.map { .object($0) } ?? .null)]
    }

    private static func event(
        id: String, version: String?, type: String, packageName: JSONValue, signedDate: JSONValue, receivedAt: Timestamp,
        subscription: JSONObject, transaction: JSONValue, extra: JSONObject
    ) -> NormalizedEvent {
        let app = JSONObject([("bundleId", packageName), ("appAppleId", .null), ("bundleVersion", .null)])
        let members: [JSONObject.Member] = [
            ("id", .string(id)),
            ("source", .string(source)),
            ("version", .string(version)),
            ("environment", .string(AppStoreEnvironment.production.rawValue)),
            ("type", .string(type)),
            ("subtype", .null),
            ("legacyType", .null),
            ("signedDate", signedDate),
            ("receivedAt", .string(receivedAt.iso8601)),
            ("verified", .bool(true)),
            ("app", .object(app)),
            ("subscription", .object(subscription)),
            ("transaction", transaction),
            ("renewal", .null),
            ("summary", .null),
            ("externalPurchaseToken", .null),
            ("appTransaction", .null),
            ("consumptionRequestReason", .null),
            ("recoveredBy", .null),
            ("extra", .object(extra)),
            ("raw", .null),
        ]
        assert(members.map(\.key) == NormalizedEvent.keys)
        // Every routing field is set above, so reading it back cannot fail.
        return try! NormalizedEvent(storedObject: JSONObject(members))
    }
}
