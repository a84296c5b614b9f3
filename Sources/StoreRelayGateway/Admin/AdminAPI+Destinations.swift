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
