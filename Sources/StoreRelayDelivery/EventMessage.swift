import StoreRelayConfig
import StoreRelayVerification

/// What every destination kind sends for an event (SPEC "Destinations beyond webhooks"): the
/// body a webhook would receive in the destination's `format`, and the metadata that travels
/// beside it as the transport's own headers or attributes.
package enum EventMessage {
    /// The normalized event (with Apple's body in `raw` when `include-raw yes`), or Apple's
    /// body byte for byte.
    package static func body(for notification: StoredNotification, _ options: DeliveryOptions) -> [UInt8] {
        switch options.format {
        case .apple: notification.body
        case .slack: ChatMessage.body(ChatMessage.text(for: notification.event))
        case .normalized:
            options.includeRaw ? notification.event.jsonBytes(includingRaw: notification.body) : notification.event.jsonBytes()
        }
    }

    /// The event's id, type, subtype, environment, bundle id and `verified`, each present
    /// only when the event has it; names as in the normalized event.
    package static func metadata(_ event: NormalizedEvent) -> [(name: String, value: String)] {
        var fields: [(name: String, value: String)] = [("id", event.id), ("type", event.type)]
        if let subtype = event.subtype { fields.append(("subtype", subtype)) }
        fields.append(("environment", event.environment?.rawValue ?? "unknown"))
        if let bundleId = event.bundleId { fields.append(("bundleId", bundleId)) }
        if let verified = event.verified { fields.append(("verified", verified ? "true" : "false")) }
        return fields
    }

    /// `metadata` of `job`'s event, `orderingGap` when an ordering gap released the job
    /// (`order per-subscription`: what a webhook says in `StoreRelay-Ordering-Gap`), the
    /// attempt's W3C `traceparent` under its standard name, so a consumer can continue the
    /// trace, and `redelivery` = `1` when an operator asked for it again (a webhook's
    /// `StoreRelay-Redelivery`).
    package static func metadata(for job: DeliveryJob) -> [(name: String, value: String)] {
        var fields = metadata(job.notification.event)
        if let gap = job.orderingGap { fields.append(("orderingGap", gap)) }
        if let traceparent = job.traceparent { fields.append(("traceparent", traceparent)) }
        if job.redelivery { fields.append(("redelivery", "1")) }
        return fields
    }

    /// Bytes a `traceparent` field adds (`00-` + 32 + `-` + 16 + `-01`, and its name): what
    /// a size check made before the attempt must leave room for.
    package static let traceparentFieldBytes = 55 + "traceparent".utf8.count
}

extension NameTemplate {
    /// The name for `event`: a missing subtype or bundle id reads `none`, an unknown
    /// environment `unknown`, so every event gets a name of the same shape.
    package func expand(for event: NormalizedEvent) -> String {
        expand { placeholder in
            switch placeholder {
            case .environment: event.environment?.rawValue ?? "unknown"
            case .type: event.type
            case .subtype: event.subtype ?? "none"
            case .bundleId: event.bundleId ?? "none"
            }
        }
    }
}
