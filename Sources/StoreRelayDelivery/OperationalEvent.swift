import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore

/// One of the gateway's own events (SPEC "Event log, search and operational events"): a
/// breaker that opened, dead letters written, an app gone silent. A destination receives
/// `{"id":..,"type":..,"at":..,<details>}`, or one line of text in `format slack`.
public struct OperationalEvent: Sendable, Equatable {
    /// `destination.breaker_opened`, `dead_letter.created`...
    public let type: String
    public let at: Timestamp
    /// What the type says more about (`destination`, `count`, `app`...), after `type` and `at`.
    public let details: JSONObject
    /// `op_` and 16 random hex digits: the `webhook-id` a receiver dedupes retries by.
    public let id: String

    public init(type: String, at: Timestamp, details: JSONObject = JSONObject(), id: String = "op_" + SecureRandom.hexToken(8)) {
        self.type = type
        self.at = at
        self.details = details
        self.id = id
    }

    /// The JSON object a destination receives in `format normalized` (and `apple`: there is no
    /// Apple body to send byte for byte).
    public var json: JSONObject {
        var object = JSONObject([("id", .string(id)), ("type", .string(type)), ("at", .string(at.iso8601))])
        for (key, value) in details where object[key] == nil { object[key] = value }
        return object
    }

    /// One sentence for a person: `StoreRelay: destination.breaker_opened destination=billing error="HTTP 503"`.
    public var summary: String {
        let fields = details.map { key, value in
            let text: String = switch value {
            case .string(let string): string.contains(" ") ? "\"\(string)\"" : string
            default: String(decoding: value.serializedBytes(), as: UTF8.self)
            }
            return "\(key)=\(text)"
        }
        return (["StoreRelay: \(type)"] + fields).joined(separator: " ")
    }

    /// The wrapper every destination kind sends: its id and type travel in the kinds' headers
    /// (`webhook-id`, `StoreRelay-Type`), so a receiver tells these apart from Apple's events.
    var notification: StoredNotification {
        let event = try? NormalizedEvent(storedObject: JSONObject([
            ("id", .string(id)), ("source", "storerelay"), ("environment", .null), ("type", .string(type)),
        ]))
        // The object above has every routing field the stored form requires.
        return StoredNotification(event: event!, disposition: .accept, destinations: [], body: [], receivedAt: at)
    }
}
