import StoreRelayCore

/// What Google Play publishes to the RTDN topic: the decoded `message.data` of a push
/// (developer.android.com/google/play/billing/rtdn-reference).
///
/// One of four kinds, or one member named `…Notification` this build does not know yet
/// (`Kind.other`, passed through); a notification with none, or with several, is refused (the
/// gateway quarantines it). Unknown members are ignored here and kept in the event's `extra`.
public struct DeveloperNotification: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case subscription(version: String?, notificationType: Int64, purchaseToken: String, subscriptionId: String)
        case oneTimeProduct(version: String?, notificationType: Int64, purchaseToken: String, sku: String)
        case voidedPurchase(purchaseToken: String, orderId: String?, productType: Int64?, refundType: Int64?)
        case test(version: String?)
        /// A kind this build does not know (Google adds them: `pendingRefundReviewNotification`),
        /// passed through as unknown Apple types are: its member name and its object.
        case other(member: String, object: JSONObject)
    }

    /// The kinds' member names, in the order they are looked for.
    static let kindKeys = ["subscriptionNotification", "oneTimeProductNotification", "voidedPurchaseNotification", "testNotification"]

    public var version: String?
    public var packageName: String
    /// When the change happened, in milliseconds since 1970 (`eventTimeMillis`).
    public var eventTime: Timestamp
    public var kind: Kind
    /// The whole decoded object, for the event's `extra`.
    public var json: JSONObject

    /// The notification's name, the event's `type`: `SUBSCRIPTION_RENEWED`,
    /// `ONE_TIME_PRODUCT_PURCHASED`, `VOIDED_PURCHASE`, `TEST`.
    public var typeName: String {
        switch kind {
        case .subscription(_, let type, _, _): PlayNotificationTypes.subscriptionName(type)
        case .oneTimeProduct(_, let type, _, _): PlayNotificationTypes.oneTimeProductName(type)
        case .voidedPurchase: "VOIDED_PURCHASE"
        case .test: "TEST"
        case .other(let member, _): Self.typeName(ofMember: member)
        }
    }

    /// `pendingRefundReviewNotification` → `PENDING_REFUND_REVIEW`: the shape of Google's own
    /// names, so a route can name a kind this build does not know.
    static func typeName(ofMember member: String) -> String {
        var name = ""
        for character in member.dropLast("Notification".count) {
            if character.isUppercase, !name.isEmpty { name.append("_") }
            name.append(contentsOf: character.uppercased())
        }
        return name
    }

    /// The purchase token, for every kind but the test.
    public var purchaseToken: String? {
        switch kind {
        case .subscription(_, _, let token, _), .oneTimeProduct(_, _, let token, _), .voidedPurchase(let token, _, _, _): token
        case .test: nil
        case .other(_, let object): object["purchaseToken"]?.stringValue
        }
    }

    /// Parses decoded `message.data`.
    public static func parse(_ data: [UInt8]) throws(GooglePlayError) -> DeveloperNotification {
        let value: JSONValue
        do {
            value = try JSONValue.parse(data, maxDepth: 16)
        } catch {
            throw GooglePlayError("The message data is not JSON (\(error.reason) at byte \(error.offset)).")
        }
        guard let object = value.objectValue else { throw GooglePlayError("The message data is not a JSON object.") }
        guard let packageName = object["packageName"]?.stringValue, !packageName.isEmpty else {
            throw GooglePlayError("The DeveloperNotification has no packageName.")
        }
        guard let millis = integer(object["eventTimeMillis"]), millis >= 0, millis < 100_000_000_000_000 else {
            throw GooglePlayError("The DeveloperNotification's eventTimeMillis is \(describe(object["eventTimeMillis"])), not a time in milliseconds.")
        }
        var present = kindKeys.filter { object[$0] != nil && object[$0]?.isNull == false }
        if present.isEmpty {
            present = object.keys.filter { key in
                key.hasSuffix("Notification") && key.count > "Notification".count && key.first?.isLowercase == true
                    && key.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } && object[key]?.objectValue != nil
            }
        }
        guard present.count == 1, let key = present.first, let inner = object[key]?.objectValue else {
            throw GooglePlayError(present.isEmpty
                ? "The DeveloperNotification has none of \(kindKeys.joined(separator: ", "))."
                : present.count > 1 ? "The DeveloperNotification has several kinds (\(present.joined(separator: ", "))); expected one."
                : "The DeveloperNotification's \(present[0]) is not an object.")
        }
        let kind: Kind
        switch key {
        case "subscriptionNotification":
            kind = .subscription(version: inner["version"]?.stringValue, notificationType: try type(inner, key),
                                 purchaseToken: try string(inner, "purchaseToken", key), subscriptionId: try string(inner, "subscriptionId", key))
        case "oneTimeProductNotification":
            kind = .oneTimeProduct(version: inner["version"]?.stringValue, notificationType: try type(inner, key),
                                   purchaseToken: try string(inner, "purchaseToken", key), sku: try string(inner, "sku", key))
        case "voidedPurchaseNotification":
            kind = .voidedPurchase(purchaseToken: try string(inner, "purchaseToken", key), orderId: inner["orderId"]?.stringValue,
                                   productType: integer(inner["productType"]), refundType: integer(inner["refundType"]))
        case "testNotification":
            kind = .test(version: inner["version"]?.stringValue)
        default:
            kind = .other(member: key, object: inner)
        }
        return DeveloperNotification(version: object["version"]?.stringValue, packageName: packageName,
                                     eventTime: Timestamp(milliseconds: millis), kind: kind, json: object)
    }

    private static func type(_ object: JSONObject, _ kind: String) throws(GooglePlayError) -> Int64 {
        guard let type = integer(object["notificationType"]), type >= 0, type <= Int64(Int32.max) else {
            throw GooglePlayError("The \(kind)'s notificationType is \(describe(object["notificationType"])), not a number.")
        }
        return type
    }

    private static func string(_ object: JSONObject, _ name: String, _ kind: String) throws(GooglePlayError) -> String {
        guard let value = object[name]?.stringValue, !value.isEmpty else {
            throw GooglePlayError("The \(kind) has no \(name).")
        }
        return value
    }

    /// A JSON integer, or a string of decimal digits (Google writes `eventTimeMillis` as a
    /// string: it is an int64 in proto3 JSON).
    static func integer(_ value: JSONValue?) -> Int64? {
        switch value {
        case .string(let text)?:
            guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
            return Int64(text)
        case .number?: return value?.int64Value
        default: return nil
        }
    }

    static func describe(_ value: JSONValue?) -> String {
        guard let value else { return "missing" }
        return String(value.serialized().prefix(60))
    }
}
