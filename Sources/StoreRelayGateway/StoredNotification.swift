import StoreRelayEvents
import StoreRelayJSON
import StoreRelaySupport

/// The journal payload of one accepted or quarantined notification:
/// `{"format":1,"id":..,"receivedAt":..,"disposition":"accepted"|"quarantined",
///   "quarantineReason":..,"event":{<normalized event>},"body":"<Apple's body>"}`.
///
/// It holds everything fan-out needs after a restart without verifying again: the event for
/// `format normalized`, Apple's body for `format apple` and `include-raw`.
struct StoredNotification: Sendable {
    static let format: Int64 = 1

    var event: NormalizedEvent
    var disposition: AcceptancePolicy.Disposition
    var body: [UInt8]
    var receivedAt: Timestamp

    init(_ processed: ProcessedNotification) {
        event = processed.event
        disposition = processed.disposition
        body = processed.body
        receivedAt = processed.receivedAt
    }

    var id: String { event.id }

    func encoded() -> [UInt8] {
        var reason: JSONValue = .null
        var disposition = "accepted"
        if case .quarantine(let why) = self.disposition {
            disposition = "quarantined"
            reason = .string(why)
        }
        let record: JSONValue = [
            "format": .integer(Self.format),
            "id": .string(event.id),
            "receivedAt": .string(receivedAt.iso8601),
            "receivedAtMs": .integer(receivedAt.milliseconds),
            "disposition": .string(disposition),
            "quarantineReason": reason,
            "event": .object(event.json),
            // Apple's bodies are JSON, so valid UTF-8: the parser rejected anything else.
            "body": .string(String(decoding: body, as: UTF8.self)),
        ]
        return record.serializedBytes()
    }

    /// Reads a journal payload back; nil when it is not a notification record of this format.
    init?(decoding bytes: [UInt8]) {
        guard let record = try? JSONValue.parse(bytes),
              record["format"]?.int64Value == Self.format,
              let eventObject = record["event"]?.objectValue,
              let event = try? NormalizedEvent(storedJSON: JSONValue.object(eventObject).serializedBytes()),
              let body = record["body"]?.stringValue,
              let receivedAt = record["receivedAtMs"]?.int64Value
        else { return nil }
        self.event = event
        self.body = Array(body.utf8)
        self.receivedAt = Timestamp(milliseconds: receivedAt)
        if record["disposition"]?.stringValue == "quarantined" {
            disposition = .quarantine(reason: record["quarantineReason"]?.stringValue ?? "quarantined")
        } else {
            disposition = .accept
        }
    }
}
