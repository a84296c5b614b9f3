import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// The JSON API of SPEC "Dead letters and admin listener". Every method takes an already
/// authenticated request and returns the whole response; identifiers are validated here
/// before the backend sees them.
struct AdminAPI: Sendable {
    static let defaultPageSize = 50
    static let maxPageSize = 500

    let backend: any AdminBackend

    func status() -> HTTPResponse {
        let counts = backend.deadLetters.countsByDestination
        let destinations: [JSONValue] = backend.destinationStatuses.map { status in
            [
                "name": .string(status.name),
                "kind": .string(status.kind),
                "queueDepth": .integer(Int64(status.queueDepth)),
                "inFlight": .integer(Int64(status.inFlight)),
                "breaker": .string(status.breaker.rawValue),
                "lastSuccess": .string(status.lastSuccess?.iso8601),
                "lastError": .string(status.lastError),
                "lastErrorAt": .string(status.lastErrorAt?.iso8601),
                "deadLetters": .integer(Int64(counts[status.name] ?? 0)),
            ]
        }
        var members: [(String, JSONValue)] = [
            ("ready", .bool(backend.isReady)),
            ("destinations", .array(destinations)),
            ("deadLetters", .integer(Int64(counts.values.reduce(0, +)))),
            ("reconciliation", .array(backend.reconciliations)),
        ]
        if let cluster = backend.clusterStatus { members.append(("cluster", cluster)) }
        let body = JSONValue.object(JSONObject(members))
        return .json(body.serialized())
    }

    func event(id: String) -> HTTPResponse {
        guard AdminRoute.isValidEventID(id) else {
            return .error(.badRequest, message: "An event id is 1 to 64 letters, digits and dashes.")
        }
        guard let state = backend.event(id: id) else {
            return .error(.notFound, message: "No event \(id) is known to the gateway right now.")
        }
        return .json(state.json.serialized())
    }

    /// `GET /api/events?originalTransactionId=…`: the recent events of one subscription with
    /// each delivery's state (and older ones that have dead letters).
    func listEvents(query: String?) -> HTTPResponse {
        let values = FormEncoding.decode(query ?? "")
        guard let subscription = values.first(where: { $0.name == "originalTransactionId" })?.value, !subscription.isEmpty,
              subscription.utf8.count <= 128
        else {
            return .error(.badRequest, message: "GET /api/events needs ?originalTransactionId=<the subscription's original transaction id>.")
        }
        let items = backend.events(ofSubscription: subscription).map(\.json)
        return .json((["items": .array(items)] as JSONValue).serialized())
    }

    func listDeadLetters(query: String?) -> HTTPResponse {
        let filters: DeadLetterFilters
        do {
            filters = try DeadLetterFilters(query: query, defaultLimit: Self.defaultPageSize, maxLimit: Self.maxPageSize)
        } catch {
            return .error(.badRequest, message: error.message)
        }
        let page = backend.deadLetters.list(filters.query, limit: filters.limit, cursor: filters.cursor)
        let body: JSONValue = ["items": .array(page.items.map(\.json)), "nextCursor": .string(page.nextCursor)]
        return .json(body.serialized())
    }

    func deadLetter(id: String) -> HTTPResponse {
        if let invalid = Self.checkDeadLetterID(id) { return invalid }
        guard let letter = backend.deadLetters.letter(id: id) else { return Self.noSuchLetter(id) }
        return .json(letter.json.serialized())
    }

    func delete(id: String) -> HTTPResponse {
        if let invalid = Self.checkDeadLetterID(id) { return invalid }
        guard backend.deadLetters.delete(id: id) else { return Self.noSuchLetter(id) }
        return HTTPResponse(status: 204)
    }

    func replay(id: String) -> HTTPResponse {
        if let invalid = Self.checkDeadLetterID(id) { return invalid }
        switch backend.replay(deadLetterId: id) {
        case .replayed(let destinations):
            let body: JSONValue = ["replayed": 1, "destinations": .array(destinations.map { .string($0) })]
            return .json(body.serialized())
        case .notFound:
            return Self.noSuchLetter(id)
        case .noRoute:
            return .error(.conflict, message: "Dead letter \(id) still matches no route; fix routes.conf first.")
        case .alreadyReplaying:
            return .error(.conflict, message: "Dead letter \(id) is already being replayed.")
        case .unreadable:
            return .error(.conflict, message: "Dead letter \(id) cannot be replayed: its event could not be read from the journal.")
        case .notUnderstood:
            return .error(.conflict, message: "Dead letter \(id) cannot be replayed: this StoreRelay still cannot read the notification "
                + "(see its reason); replay it again after an upgrade that reads it.")
        }
    }

    /// `POST /api/dead-letters/replay` with `{"destination":..,"reason":..}` (each optional or null).
    func replayMatching(body: [UInt8]) -> HTTPResponse {
        guard let json = try? JSONValue.parse(body), json.objectValue != nil else {
            return .error(.badRequest, message: "The body must be a JSON object such as {\"destination\":\"billing\",\"reason\":\"exhausted\"}.")
        }
        var destination: String?
        var reason: DeadLetter.Reason?
        switch json["destination"] {
        case nil, .null?: break
        case .string(let name)?: destination = name.isEmpty ? nil : name
        default: return .error(.badRequest, message: "\"destination\" must be a string or null.")
        }
        switch json["reason"] {
        case nil, .null?: break
        case .string(let name)?:
            guard let parsed = DeadLetterFilters.reason(name) else { return .error(.badRequest, message: DeadLetterFilters.reasonHelp(name)) }
            reason = parsed
        default: return .error(.badRequest, message: "\"reason\" must be a string or null.")
        }
        let count = backend.replayAll(DeadLetterQuery(destination: destination, reason: reason))
        return .json((["replayed": .integer(Int64(count))] as JSONValue).serialized())
    }

    static func checkDeadLetterID(_ id: String) -> HTTPResponse? {
        DeadLetterStore.isValidID(id) ? nil
            : .error(.badRequest, message: "A dead-letter id is dl- followed by 32 lowercase hex digits.")
    }

    private static func noSuchLetter(_ id: String) -> HTTPResponse {
        .error(.notFound, message: "There is no dead letter \(id).")
    }
}
