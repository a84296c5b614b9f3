import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// `GET /api/destinations` and pause and resume (SPEC "Delivery controls").
extension AdminAPI {
    /// Every destination in configuration order, its state `paused` or `active`, with what
    /// waits and what is in flight.
    func destinations() async -> HTTPResponse {
        let counts = await backend.deadLetters.countsByDestination
        let items: [JSONValue] = backend.destinationStatuses.map { Self.json($0, deadLetters: counts[$0.name] ?? 0) }
        return .json((["items": .array(items)] as JSONValue).serialized())
    }

    /// `POST /api/destinations/{name}/pause` (or `/resume`): `{"destination":..,"paused":..,
    /// "changed":..}`; 404 for a name no destination has.
    func setPaused(_ pause: Bool, destination name: String) async -> HTTPResponse {
        guard Self.isValidDestinationName(name) else {
            return .error(.badRequest, message: "A destination name is 1 to 64 letters, digits, dots, dashes and underscores.")
        }
        switch await backend.setPaused(pause, destination: name) {
        case .done(let changed):
            let body: JSONValue = ["destination": .string(name), "paused": .bool(pause), "changed": .bool(changed)]
            return .json(body.serialized())
        case .unknownDestination:
            return .error(.notFound, message: "There is no destination \(name).")
        case .failed(let why):
            return .error(.unavailable, message: "Destination \(name) was not \(pause ? "paused" : "resumed"): \(why).")
        }
    }

    /// `POST /api/events/{id}/redeliver` with `{"destination":NAME}`: 202 with
    /// `{"event":..,"destination":..,"redelivery":"queued"}`; 404 for an event or destination
    /// the gateway does not know, 409 when that delivery is unfinished or dead-lettered (replay
    /// the letter instead) or the event cannot be sent there again.
    func redeliver(eventId id: String, body: [UInt8]) async -> HTTPResponse {
        guard AdminRoute.isValidEventID(id) else { return .error(.badRequest, message: "That is not an event id.") }
        guard let json = try? JSONValue.parse(body), json.objectValue != nil else {
            return .error(.badRequest, message: "The body must be a JSON object: {\"destination\":\"NAME\"}.")
        }
        guard let name = json["destination"]?.stringValue, Self.isValidDestinationName(name) else {
            return .error(.badRequest, message: "\"destination\" must name a destination (1 to 64 letters, digits, dots, dashes and underscores).")
        }
        switch await backend.redeliver(eventId: id, destination: name) {
        case .queued:
            let answer: JSONValue = ["event": .string(id), "destination": .string(name), "redelivery": "queued"]
            return .json(status: 202, answer.serialized())
        case .unknownEvent:
            return .error(.notFound, message: "Event \(id) is not known to this gateway (it remembers recent and unfinished events).")
        case .unknownDestination:
            return .error(.notFound, message: "There is no destination \(name).")
        case .stillPending:
            return .error(.conflict, message: "Event \(id) is still being delivered to \(name); it is not redelivered.")
        case .deadLettered(let letter):
            return .error(.conflict, message: "Event \(id) is a dead letter for \(name)"
                + (letter.map { " (\($0))" } ?? "") + "; replay the dead letter to send it again.")
        case .bodyNoLongerHeld:
            return .error(.conflict, message: "Destination \(name) receives Apple's body, which the gateway no longer holds for event \(id).")
        case .notDeliverable(let why):
            return .error(.conflict, message: "Event \(id) was never delivered (\(why)); there is nothing to redeliver.")
        case .failed(let why):
            return .error(.unavailable, message: "Event \(id) was not redelivered: \(why).")
        }
    }

    /// One destination as `/api/destinations` and `/api/status` list it.
    static func json(_ status: DestinationStatus, deadLetters: Int) -> JSONValue {
        [
            "name": .string(status.name),
            "kind": .string(status.kind),
            "state": .string(status.paused ? "paused" : "active"),
            "paused": .bool(status.paused),
            "queueDepth": .integer(Int64(status.queueDepth)),
            "inFlight": .integer(Int64(status.inFlight)),
            "breaker": .string(status.breaker.rawValue),
            "lastSuccess": .string(status.lastSuccess?.iso8601),
            "lastError": .string(status.lastError),
            "lastErrorAt": .string(status.lastErrorAt?.iso8601),
            "deadLetters": .integer(Int64(deadLetters)),
        ]
    }

    /// Destination names as the configuration allows them (checked before the name reaches
    /// a log line or the server); a name that passes may still name no destination (404).
    static func isValidDestinationName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        return (1...64).contains(bytes.count) && bytes.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ".")
        }
    }
}
