import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// The JSON API of SPEC "Dead letters and admin listener". Every method takes an already
/// authenticated request and returns the whole response; identifiers are validated here
/// before the backend sees them. `async` where the backend may wait (see `AdminBackend`).
struct AdminAPI: Sendable {
    static let defaultPageSize = 50
    static let maxPageSize = 500

    let backend: any AdminBackend

    func status() async -> HTTPResponse {
        let counts = await backend.deadLetters.countsByDestination
        let destinations: [JSONValue] = backend.destinationStatuses.map { Self.json($0, deadLetters: counts[$0.name] ?? 0) }
        var members: [(String, JSONValue)] = [
            ("ready", .bool(backend.isReady)),
            ("destinations", .array(destinations)),
            ("deadLetters", .integer(Int64(counts.values.reduce(0, +)))),
            ("reconciliation", .array(backend.reconciliations)),
        ]
        if let cluster = await backend.clusterStatus { members.append(("cluster", cluster)) }
        let body = JSONValue.object(JSONObject(members))
        return .json(body.serialized())
    }

    func event(id: String) async -> HTTPResponse {
        guard AdminRoute.isValidEventID(id) else {
            return .error(.badRequest, message: "An event id is 1 to 64 letters, digits and dashes.")
        }
        if let state = await backend.event(id: id) { return .json(state.json.serialized()) }
        // Older than the window of recent events: the event log's summary, states only.
        if case .success(let page)? = await backend.searchEvents(EventLogQuery(q: id), limit: 20, after: nil),
           let summary = page.items.first(where: { $0.id == id }), case .object(var json) = summary.json {
            json["deliveriesKnown"] = "states only"
            return .json(JSONValue.object(json).serialized())
        }
        return .error(.notFound, message: "No event \(id) is known to the gateway right now.")
    }

    /// `GET /api/events?q=&app=&environment=&type=&state=&since=&until=&limit=&cursor=`: the
    /// event log, newest first (`EventFilters`). The older `?originalTransactionId=` form
    /// still answers as before (the recent window, each event as `/api/events/{id}`).
    func listEvents(query: String?) async -> HTTPResponse {
        if FormEncoding.decode(query ?? "").contains(where: { $0.name == "originalTransactionId" }) {
            return await eventsOfSubscription(query: query)
        }
        let filters: EventFilters
        do {
            filters = try EventFilters(query: query, defaultLimit: Self.defaultPageSize, maxLimit: Self.maxPageSize)
        } catch {
            return .error(.badRequest, message: error.message)
        }
        switch await backend.searchEvents(filters.query, limit: filters.limit, after: filters.cursor) {
        case nil:
            return .error(.notImplemented, message: "This gateway keeps no event log; "
                + "GET /api/events/{id} and GET /api/events?originalTransactionId= still answer.")
        case .failure(let error)?:
            return .error(.storageFailed, message: "The event log could not be read: \(error.message)")
        case .success(let page)?:
            return .json(page.json.serialized())
        }
    }

    /// `GET /api/events?originalTransactionId=…`: the recent events of one subscription with
    /// each delivery's state (and older ones that have dead letters).
    private func eventsOfSubscription(query: String?) async -> HTTPResponse {
        let values = FormEncoding.decode(query ?? "")
        guard let subscription = values.first(where: { $0.name == "originalTransactionId" })?.value, !subscription.isEmpty,
              subscription.utf8.count <= 128
        else {
            return .error(.badRequest, message: "GET /api/events needs ?originalTransactionId=<the subscription's original transaction id>.")
        }
        let items = await backend.events(ofSubscription: subscription).map(\.json)
        return .json((["items": .array(items)] as JSONValue).serialized())
    }

    func listDeadLetters(query: String?) async -> HTTPResponse {
        let filters: DeadLetterFilters
        do {
            filters = try DeadLetterFilters(query: query, defaultLimit: Self.defaultPageSize, maxLimit: Self.maxPageSize)
        } catch {
            return .error(.badRequest, message: error.message)
        }
        let page = await backend.deadLetters.list(filters.query, limit: filters.limit, cursor: filters.cursor)
        let body: JSONValue = ["items": .array(page.items.map(\.json)), "nextCursor": .string(page.nextCursor)]
        return .json(body.serialized())
    }

    func deadLetter(id: String) async -> HTTPResponse {
        if let invalid = Self.checkDeadLetterID(id) { return invalid }
        guard let letter = await backend.deadLetters.letter(id: id) else { return Self.noSuchLetter(id) }
        return .json(letter.json.serialized())
    }

    func delete(id: String) async -> HTTPResponse {
        if let invalid = Self.checkDeadLetterID(id) { return invalid }
        guard await backend.deadLetters.delete(id: id) else { return Self.noSuchLetter(id) }
        return HTTPResponse(status: 204)
    }

    /// `POST /api/dead-letters/{id}/replay`, forced past the staleness rule with `?force=1`
    /// or a body `{"force":true}` (no body otherwise).
    func replay(id: String, query: String?, body: [UInt8]) async -> HTTPResponse {
        if let invalid = Self.checkDeadLetterID(id) { return invalid }
        let force: Bool
        do {
            let json = try body.isEmpty ? nil : Self.object(body, example: #"{"force":true}"#)
            force = try Self.force(query: query, json: json)
        } catch {
            return .error(.badRequest, message: error.message)
        }
        switch await backend.replay(deadLetterId: id, force: force) {
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
        case .tampered:
            return .error(.conflict, message: "Dead letter \(id) was not replayed: a record on the cluster server failed its "
                + "cluster-key check (written or changed by something other than an instance, or sealed with a key this instance "
                + "lacks); it is kept aside, and a replay delivers it once it checks out.")
        case .notUnderstood:
            return .error(.conflict, message: "Dead letter \(id) cannot be replayed: this StoreRelay still cannot read the notification "
                + "(see its reason); replay it again after an upgrade that reads it.")
        case .stale(let reason):
            return .error(.conflict, message: "Dead letter \(id) was not replayed: its notification is \(reason). "
                + "Replay it with force (?force=1, or storerelay dlq replay --force) if its destination can tell.")
        }
    }

    /// `POST /api/dead-letters/replay` with `{"destination":..,"reason":..,"force":..}` (each
    /// optional or null; `?force=1` forces too). Answers `{"replayed":N,"stale":M}`: the stale
    /// letters were left where they are.
    func replayMatching(query: String?, body: [UInt8]) async -> HTTPResponse {
        let json: JSONValue
        let force: Bool
        do {
            json = try Self.object(body, example: #"{"destination":"billing","reason":"exhausted"}"#)
            force = try Self.force(query: query, json: json)
        } catch {
            return .error(.badRequest, message: error.message)
        }
        var destination: String?
        var reason: DeadLetterReasonFilter?
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
        let result = await backend.replayAll(DeadLetterQuery(destination: destination, reason: reason), force: force)
        return .json(result.json.serialized())
    }

    /// A request body that must be a JSON object.
    private static func object(_ body: [UInt8], example: String) throws(DeadLetterFilters.Invalid) -> JSONValue {
        guard let json = try? JSONValue.parse(body), json.objectValue != nil else {
            throw DeadLetterFilters.Invalid(message: "The body must be a JSON object such as \(example).")
        }
        return json
    }

    /// Whether a replay is forced past the staleness rule: `force=1` (or `true`) in the query,
    /// or `"force": true` in the body. Anything else named `force` is refused, so a typo
    /// never replays what the operator meant to keep.
    static func force(query: String?, json: JSONValue?) throws(DeadLetterFilters.Invalid) -> Bool {
        var forced = false
        if let text = FormEncoding.value("force", in: query ?? "") {
            switch text {
            case "1", "true": forced = true
            case "0", "false", "": break
            default: throw DeadLetterFilters.Invalid(message: "force takes 1 or 0, not '\(text.prefix(40))'.")
            }
        }
        switch json?["force"] {
        case nil, .null?: break
        case .bool(let value)?: forced = forced || value
        default: throw DeadLetterFilters.Invalid(message: "\"force\" must be true, false or null.")
        }
        return forced
    }

    static func checkDeadLetterID(_ id: String) -> HTTPResponse? {
        DeadLetterStore.isValidID(id) ? nil
            : .error(.badRequest, message: "A dead-letter id is dl- followed by 32 lowercase hex digits.")
    }

    private static func noSuchLetter(_ id: String) -> HTTPResponse {
        .error(.notFound, message: "There is no dead letter \(id).")
    }
}
