import StoreRelayStorage
import StoreRelayCore

/// The filters and paging of `GET /api/events`, from a query string, validated:
/// `q=&app=&environment=&type=&state=&destination=&since=&until=&limit=&cursor=`.
///
/// `state` is `pending`, `delivered` or `dead-lettered` (a delivery to any destination in
/// that state), or `NAME:STATE` for one destination. `since` and `until` take an ISO-8601
/// time or an age back from now (`24h`), as the dead-letter list does. Unknown names are
/// refused, so a misspelt filter never silently lists everything.
struct EventFilters: Equatable {
    typealias Invalid = DeadLetterFilters.Invalid

    static let names: Set<String> = ["q", "app", "environment", "type", "state", "destination", "since", "until", "limit", "cursor"]
    static let environments = ["production", "sandbox", "xcode", "localtesting"]

    var query = EventLogQuery()
    var limit: Int
    var cursor: EventLogCursor?

    /// Empty values count as absent (a GET form sends `app=` for "any"); a name given twice is refused.
    init(query text: String?, defaultLimit: Int, maxLimit: Int, now: Timestamp = .now()) throws(Invalid) {
        limit = defaultLimit
        var values: [String: String] = [:]
        for pair in FormEncoding.decode(text ?? "") {
            guard Self.names.contains(pair.name) else {
                throw Invalid(message: "Unknown parameter '\(pair.name.prefix(40))'; GET /api/events takes "
                    + Self.names.sorted().joined(separator: ", ") + ".")
            }
            guard values[pair.name] == nil else { throw Invalid(message: "\(pair.name) is given twice.") }
            if !pair.value.isEmpty { values[pair.name] = pair.value }
        }
        for name in ["q", "app", "type", "destination"] {
            guard let value = values[name] else { continue }
            guard value.utf8.count <= 128, !value.contains(where: { $0.isNewline || $0 == "\0" }) else {
                throw Invalid(message: "\(name) is at most 128 characters on one line.")
            }
        }
        query.q = values["q"]?.trimmingSpaces
        if query.q?.isEmpty == true { query.q = nil }
        query.app = values["app"]
        query.type = values["type"]
        query.destination = values["destination"]
        if let environment = values["environment"] {
            guard Self.environments.contains(environment) else {
                throw Invalid(message: "environment is one of " + Self.environments.joined(separator: ", ") + ", not '\(environment.prefix(40))'.")
            }
            query.environment = environment
        }
        if let text = values["state"] { try parseState(text) }
        query.since = try values["since"].map { (text) throws(Invalid) in try Self.time(text, "since", now: now) }
        query.until = try values["until"].map { (text) throws(Invalid) in try Self.time(text, "until", now: now) }
        if let since = query.since, let until = query.until, until <= since {
            throw Invalid(message: "until must be later than since.")
        }
        if let text = values["limit"] {
            guard text.count <= 6, let value = Int(text), (1...maxLimit).contains(value) else {
                throw Invalid(message: "limit must be a whole number from 1 to \(maxLimit).")
            }
            limit = value
        }
        if let text = values["cursor"] {
            guard let cursor = EventLogCursor(text) else {
                throw Invalid(message: "cursor is not one this server issued; start again without it.")
            }
            self.cursor = cursor
        }
    }

    /// `STATE` or `DESTINATION:STATE`.
    private mutating func parseState(_ text: String) throws(Invalid) {
        var name = Substring(text)
        if let colon = text.lastIndex(of: ":") {
            let destination = String(text[..<colon])
            guard !destination.isEmpty, destination.utf8.count <= 128 else {
                throw Invalid(message: "state is pending, delivered or dead-lettered, or DESTINATION:STATE.")
            }
            guard query.destination == nil || query.destination == destination else {
                throw Invalid(message: "state names destination '\(destination.prefix(40))' but destination says another.")
            }
            query.destination = destination
            name = text[text.index(after: colon)...]
        }
        guard let state = EventSummary.State(name: String(name)) else {
            throw Invalid(message: "state is pending, delivered or dead-lettered (optionally DESTINATION:STATE), not '\(text.prefix(40))'.")
        }
        query.state = state
    }

    private static func time(_ text: String, _ name: String, now: Timestamp) throws(Invalid) -> Timestamp {
        if let time = Timestamp(iso8601: text) { return time }
        if let age = Duration(compact: text) { return Timestamp(milliseconds: now.milliseconds - age.wholeMilliseconds) }
        throw Invalid(message: "\(name) takes a time such as 2026-11-20T10:15:30Z or an age such as 24h or 7d, not '\(text.prefix(40))'.")
    }
}
