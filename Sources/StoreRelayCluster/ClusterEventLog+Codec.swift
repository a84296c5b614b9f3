import StoreRelayStorage
import StoreRelayCore

/// The summary as the server keeps it under `_`: JSON of the item's fields, the
/// destinations in order (their states live in their own fields, changed one at a time).
extension ClusterEventLog {
    static func encode(_ summary: EventSummary) -> [UInt8] {
        JSONValue.object(JSONObject([
            ("id", .string(summary.id)), ("at", .integer(summary.receivedAt.milliseconds)), ("type", .string(summary.type)),
            ("subtype", .string(summary.subtype)), ("environment", .string(summary.environment)), ("bundleId", .string(summary.bundleId)),
            ("otid", .string(summary.originalTransactionId)), ("tid", .string(summary.transactionId)),
            ("destinations", .array(summary.deliveries.map { .string($0.destination) })),
        ])).serializedBytes()
    }

    /// The summary in `bytes` with the destinations' states from `states` (name → state
    /// name; a missing or unknown one reads as pending); nil for anything else.
    static func decode(_ bytes: [UInt8], states: [String: String]) -> EventSummary? {
        guard let json = try? JSONValue.parse(bytes), let id = json["id"]?.stringValue, let at = json["at"]?.int64Value,
              let type = json["type"]?.stringValue, let destinations = json["destinations"]?.arrayValue
        else { return nil }
        return EventSummary(
            id: id, receivedAt: Timestamp(milliseconds: at), type: type, subtype: json["subtype"]?.stringValue,
            environment: json["environment"]?.stringValue, bundleId: json["bundleId"]?.stringValue,
            originalTransactionId: json["otid"]?.stringValue, transactionId: json["tid"]?.stringValue,
            deliveries: destinations.compactMap(\.stringValue).map { name in
                EventSummary.Delivery(destination: name, state: states[name].flatMap(EventSummary.State.init(name:)) ?? .pending)
            })
    }
}
