import StoreRelayConfig
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayNet
import StoreRelayCore

/// Builds the POST a webhook destination receives (SPEC "Delivery to webhooks"), signed the
/// Standard Webhooks way.
package struct WebhookRequest {
    let options: WebhookOptions

    /// The body this destination receives for `notification` (`EventMessage`).
    func body(for notification: StoredNotification) -> [UInt8] { EventMessage.body(for: notification, options.delivery) }

    func request(for notification: StoredNotification, body: [UInt8], attempt: Int, now: Timestamp,
                 orderingGap: String? = nil, traceparent: String? = nil, redelivery: Bool = false) -> HTTPClientRequest {
        let timestamp = String(now.seconds)
        var headers: HTTPHeaders = [
            "Content-Type": "application/json",
            "User-Agent": "StoreRelay/\(StoreRelayVersion.current)",
            "webhook-id": notification.id,
            "webhook-timestamp": timestamp,
        ]
        let keys = options.signingKeys
        if !keys.isEmpty {
            headers.add(name: "webhook-signature",
                        value: Self.signatures(id: notification.id, timestamp: timestamp, body: body, keys: keys))
        }
        headers.add(name: "StoreRelay-Attempt", value: String(attempt))
        headers.add(name: "StoreRelay-Environment", value: notification.event.environment?.rawValue ?? "unknown")
        headers.add(name: "StoreRelay-Type", value: notification.event.type)
        if let subtype = notification.event.subtype {
            headers.add(name: "StoreRelay-Subtype", value: subtype)
        }
        if let verified = notification.event.verified {
            headers.add(name: "StoreRelay-Verified", value: verified ? "true" : "false")
        }
        if let orderingGap {
            headers.add(name: "StoreRelay-Ordering-Gap", value: orderingGap)
        }
        if redelivery {
            headers.add(name: "StoreRelay-Redelivery", value: "1")
        }
        // W3C Trace Context: the receiver's work joins the event's trace under this attempt.
        if let traceparent {
            headers.add(name: "traceparent", value: traceparent)
        }
        for header in options.headers {
            headers.add(name: header.name, value: header.value)
        }
        return HTTPClientRequest(method: "POST", url: options.url, headers: headers, body: body, extraCAFile: options.caFile)
    }

    /// The first field of `notification` that travels in a header and holds a byte HTTP
    /// forbids in a field value (CR, LF, NUL, other controls), described for a dead letter;
    /// nil when every one can be sent. Such a value would make every attempt fail the same
    /// way, so the attempt is not made (SPEC "Delivery to webhooks").
    /// The ingress asks the same of every event, and quarantines what fails.
    package static func unsendableField(of event: NormalizedEvent) -> String? {
        let fields: [(header: String, field: String, value: String?)] = [
            ("webhook-id", "id", event.id),
            ("StoreRelay-Type", "type", event.type),
            ("StoreRelay-Subtype", "subtype", event.subtype),
        ]
        for (header, field, value) in fields {
            guard let value, !value.utf8.allSatisfy(HTTPSyntax.isFieldValueChar) else { continue }
            return "the event's \(field) holds a control character, which HTTP forbids in its \(header) header; "
                + "it cannot be sent, however often it is tried"
        }
        return nil
    }

    /// One `v1,` signature per key, newest first, space-separated: during a secret rotation a
    /// receiver still holding the old secret and one already holding the new both find theirs
    /// (Standard Webhooks, "Signature scheme", rotation).
    static func signatures(id: String, timestamp: String, body: [UInt8], keys: [[UInt8]]) -> String {
        keys.map { signature(id: id, timestamp: timestamp, body: body, key: $0) }.joined(separator: " ")
    }

    /// `v1,<base64 HMAC-SHA256(key, "id.timestamp.body")>` (Standard Webhooks).
    static func signature(id: String, timestamp: String, body: [UInt8], key: [UInt8]) -> String {
        var signed = Array("\(id).\(timestamp).".utf8)
        signed.append(contentsOf: body)
        return "v1," + Base64.encode(HMACSHA256.authenticationCode(for: signed, key: key))
    }
}
