import StoreRelayCore
import StoreRelayVerification

/// A V2 notification whose nested signed transaction and renewal info a gateway could not
/// verify, as a not-understood quarantined letter keeps it: Apple's body
/// (`{"signedPayload": JWS}`) and the event the gateway makes of the outer payload alone
/// (no `transaction`, no `subscription.originalTransactionId`). The JWS signatures are
/// placeholders: only the shape matters to what indexes the letter.
public struct NestedDataNotification {
    public let body: [UInt8]
    public let event: NormalizedEvent
    /// The quarantine reason, as the policy words it.
    public let reason: String

    public init(uuid: String, transactionId: String, originalTransactionId: String, signedAt: Timestamp = .now()) throws {
        func jws(_ payload: JSONValue) -> String {
            [Base64.urlEncode(Array(#"{"alg":"ES256"}"#.utf8)), Base64.urlEncode(payload.serializedBytes()),
             Base64.urlEncode([UInt8](repeating: 1, count: 64))].joined(separator: ".")
        }
        let transaction = jws(["transactionId": .string(transactionId), "originalTransactionId": .string(originalTransactionId),
                               "bundleId": "com.acme.other", "environment": "Sandbox"])
        let renewal = jws(["originalTransactionId": .string(originalTransactionId), "environment": "Sandbox"])
        let payload: JSONValue = [
            "notificationType": "DID_RENEW", "notificationUUID": .string(uuid), "version": "2.0",
            "signedDate": .integer(signedAt.milliseconds),
            "data": ["bundleId": "com.acme.journal", "environment": "Sandbox", "appAppleId": 1,
                     "signedTransactionInfo": .string(transaction), "signedRenewalInfo": .string(renewal)],
        ]
        body = JSONValue.object(JSONObject([("signedPayload", .string(jws(payload)))])).serializedBytes()
        event = try NormalizedEvent(content: NotificationContent(payload: payload.objectValue!, environment: .sandbox),
                                    receivedAt: signedAt)
        reason = "not understood: data.signedTransactionInfo is for bundle \"com.acme.other\" but the notification is for \"com.acme.journal\""
    }
}
