import StoreRelayCore

/// A delivery-progress record, stored in the journal under its event's id so that after a
/// crash every delivery resumes with its attempts and schedule intact:
/// `{"d":"<destination>","r":"attempt","a":{...},"next":<ms>}`, `{"d":..,"r":"delivered"}`,
/// `{"d":..,"r":"dead","dl":"<dead letter id>"}`. The destination `""` stands for the dead
/// letter of an unrouted or quarantined event.
enum DeliveryProgress: Sendable, Equatable {
    case attempted(destination: String, attempt: DeliveryAttempt, next: Timestamp)
    case delivered(destination: String)
    case deadLettered(destination: String, deadLetterId: String)

    var destination: String {
        switch self {
        case .attempted(let d, _, _), .delivered(let d), .deadLettered(let d, _): d
        }
    }

    func encoded() -> [UInt8] {
        let json: JSONValue = switch self {
        case .attempted(let destination, let attempt, let next):
            ["d": .string(destination), "r": "attempt", "a": attempt.progressJSON, "next": .integer(next.milliseconds)]
        case .delivered(let destination):
            ["d": .string(destination), "r": "delivered"]
        case .deadLettered(let destination, let id):
            ["d": .string(destination), "r": "dead", "dl": .string(id)]
        }
        return json.serializedBytes()
    }

    init?(decoding bytes: [UInt8]) {
        guard let json = try? JSONValue.parse(bytes), let destination = json["d"]?.stringValue else { return nil }
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
