import StoreRelayStorage
import StoreRelayCore

/// A delivery-progress record, stored in the journal under its event's id so that after a
/// crash every delivery resumes with its attempts and schedule intact:
/// `{"d":"<destination>","r":"attempt","a":{...},"next":<ms>}`, `{"d":..,"r":"delivered"}`,
/// `{"d":..,"r":"dead","dl":"<dead letter id>"}`, each with `"p":[segment,offset]`, the event
/// record's position (records of versions before delivery checkpoints lack it). The
/// destination `""` stands for the dead letter of an unrouted or quarantined event.
enum DeliveryProgress: Sendable, Equatable {
    case attempted(destination: String, attempt: DeliveryAttempt, next: Timestamp)
    case delivered(destination: String)
    case deadLettered(destination: String, deadLetterId: String)

    var destination: String {
        switch self {
        case .attempted(let d, _, _), .delivered(let d), .deadLettered(let d, _): d
        }
    }

    func encoded(eventAt position: RecordPosition? = nil) -> [UInt8] {
        var json: JSONValue = switch self {
        case .attempted(let destination, let attempt, let next):
            ["d": .string(destination), "r": "attempt", "a": attempt.progressJSON, "next": .integer(next.milliseconds)]
        case .delivered(let destination):
            ["d": .string(destination), "r": "delivered"]
        case .deadLettered(let destination, let id):
            ["d": .string(destination), "r": "dead", "dl": .string(id)]
        }
        if let position, case .object(var members) = json {
            members["p"] = position.json
            json = .object(members)
        }
        return json.serializedBytes()
    }

    /// The record and the position of its event, when it names one.
    static func decode(_ bytes: [UInt8]) -> (step: DeliveryProgress, position: RecordPosition?)? {
        guard let json = try? JSONValue.parse(bytes), let step = DeliveryProgress(json: json) else { return nil }
        return (step, json["p"].flatMap(RecordPosition.init(json:)))
    }

    init?(decoding bytes: [UInt8]) {
        guard let json = try? JSONValue.parse(bytes) else { return nil }
        self.init(json: json)
    }

    private init?(json: JSONValue) {
        guard let destination = json["d"]?.stringValue else { return nil }
        switch json["r"]?.stringValue {
        case "attempt":
            guard let attempt = json["a"].flatMap(DeliveryAttempt.init(progressJSON:)),
                  let next = json["next"]?.int64Value else { return nil }
            self = .attempted(destination: destination, attempt: attempt, next: Timestamp(milliseconds: next))
        case "delivered":
            self = .delivered(destination: destination)
        case "dead":
            self = .deadLettered(destination: destination, deadLetterId: json["dl"]?.stringValue ?? "")
        default:
            return nil
        }
    }
}
