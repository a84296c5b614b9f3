import StoreRelayVerification
import StoreRelayCore

/// `format slack`: `{"text": ...}`, the body Slack's incoming webhooks take, and Mattermost's,
/// Rocket.Chat's and Google Chat's with them. A chat room is read by people, so the event is
/// one line rather than its JSON.
enum ChatMessage {
    static func body(_ text: String) -> [UInt8] {
        JSONValue.object(JSONObject([("text", .string(text))])).serializedBytes()
    }

    /// An App Store event in one line: `DID_RENEW (BILLING_RECOVERY) com.acme.app production,
    /// originalTransactionId 2000..., id 6f1e...`.
    static func text(for event: NormalizedEvent) -> String {
        var text = "StoreRelay: " + event.type
        if let subtype = event.subtype { text += " (\(subtype))" }
        text += " " + (event.bundleId ?? "unknown app") + " " + (event.environment?.rawValue ?? "unknown environment")
        if let original = event.originalTransactionId { text += ", originalTransactionId \(original)" }
        return text + ", id \(event.id)"
    }
}
