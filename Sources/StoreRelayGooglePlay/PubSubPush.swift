import StoreRelayCore

/// The body of one Pub/Sub push (Cloud Pub/Sub "push subscriptions", wrapped format):
/// `{"message":{"data":"<base64>","messageId":"...","publishTime":"...","attributes":{}},
/// "subscription":"projects/P/subscriptions/S"}`.
///
/// Pub/Sub writes `messageId` and `publishTime` twice, also as `message_id` and
/// `publish_time`; either spelling is read, camelCase first.
public struct PubSubPush: Sendable, Equatable {
    /// The longest message id kept as an event id; Pub/Sub's are decimal, about 16 digits.
    public static let maximumMessageIdLength = 128

    /// `message.messageId`: unique per topic, the same on every redelivery.
    public var messageId: String
    /// `message.data`, base64-decoded: the publisher's bytes (a DeveloperNotification).
    public var data: [UInt8]
    /// `message.publishTime` as sent (RFC 3339), if any.
    public var publishTime: String?
    /// `message.attributes`, if any.
    public var attributes: JSONObject?
    /// `subscription`: the push subscription's full name.
    public var subscription: String?

    public init(messageId: String, data: [UInt8], publishTime: String? = nil, attributes: JSONObject? = nil,
                subscription: String? = nil) {
        self.messageId = messageId
        self.data = data
        self.publishTime = publishTime
        self.attributes = attributes
        self.subscription = subscription
    }

    /// Parses a push body; throws with a sentence when it is not one. JSON with a duplicate
    /// member name anywhere is refused by the parser.
    public static func parse(_ body: [UInt8]) throws(GooglePlayError) -> PubSubPush {
        guard !body.isEmpty else { throw GooglePlayError("The body is empty; expected a Pub/Sub push.") }
        let json: JSONValue
        do {
            json = try JSONValue.parse(body, maxDepth: 16)
        } catch {
            throw GooglePlayError("The body is not valid JSON (\(error.reason) at byte \(error.offset)).")
        }
        guard let message = json["message"]?.objectValue else {
            throw GooglePlayError("The body has no \"message\" object; expected a Pub/Sub push.")
        }
        let id = message["messageId"] ?? message["message_id"]
        guard let messageId = id?.stringValue, !messageId.isEmpty else {
            throw GooglePlayError("The push message has no messageId.")
        }
        guard messageId.utf8.count <= maximumMessageIdLength,
              messageId.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw GooglePlayError("The push message's messageId is not printable ASCII of at most \(maximumMessageIdLength) characters.")
        }
        guard let encoded = message["data"]?.stringValue else {
            throw GooglePlayError("The push message has no data string.")
        }
        guard let data = Base64.decode(encoded) else {
            throw GooglePlayError("The push message's data is not base64.")
        }
        var attributes: JSONObject?
        if let value = message["attributes"], !value.isNull {
            guard let object = value.objectValue else { throw GooglePlayError("The push message's attributes are not an object.") }
            attributes = object
        }
        return PubSubPush(messageId: messageId, data: data,
                          publishTime: (message["publishTime"] ?? message["publish_time"])?.stringValue,
                          attributes: attributes, subscription: json["subscription"]?.stringValue)
    }

    /// A push body for this message, as Pub/Sub writes one (simulator, tests).
    public func body() -> [UInt8] {
        var message: [JSONObject.Member] = [("data", .string(Base64.encode(data))), ("messageId", .string(messageId))]
        if let publishTime { message.append(("publishTime", .string(publishTime))) }
        if let attributes { message.append(("attributes", .object(attributes))) }
        var members: [JSONObject.Member] = [("message", .object(JSONObject(message)))]
        if let subscription { members.append(("subscription", .string(subscription))) }
        return JSONValue.object(JSONObject(members)).serializedBytes()
    }
}
