import StoreRelayDelivery
import StoreRelayCore

/// The filters and paging of a dead-letter listing, from a query string, validated:
/// `destination=&reason=&eventId=&originalTransactionId=&transactionId=&bundleId=&type=`
/// `&since=&until=&limit=&cursor=`. `since` and `until` take an ISO-8601 time
/// (`2026-11-20T10:15:30Z`) or an age back from now (`24h`, `7d`).
struct DeadLetterFilters: Equatable {
    struct Invalid: Error {
        let message: String
    }

    /// The search fields, by their query names, as the page's form and the CLI send them;
    /// `q` is the page's one search box, matching any of the others (or a dead-letter id).
    static let searchFields = ["eventId", "originalTransactionId", "transactionId", "bundleId", "type", "q"]

    var query: DeadLetterQuery
    var limit: Int
    var cursor: String?
    /// The text of `since` and `until` as given, to show them back in the form.
    var sinceText: String?
    var untilText: String?

    var destination: String? {
        get { query.destination }
        set { query.destination = newValue }
    }
    var reason: DeadLetterReasonFilter? {
        get { query.reason }
        set { query.reason = newValue }
    }

    init(destination: String? = nil, reason: DeadLetterReasonFilter? = nil, limit: Int, cursor: String? = nil) {
        query = DeadLetterQuery(destination: destination, reason: reason)
        self.limit = limit
        self.cursor = cursor
    }

    /// Empty values count as absent (a GET form sends `destination=` for "any").
    init(query text: String?, defaultLimit: Int, maxLimit: Int, now: Timestamp = .now()) throws(Invalid) {
        var values: [String: String] = [:]
        for pair in FormEncoding.decode(text ?? "") where values[pair.name] == nil && !pair.value.isEmpty {
            values[pair.name] = pair.value
        }
        query = DeadLetterQuery(destination: values["destination"])
        if let name = values["reason"] {
            guard let reason = Self.reason(name) else { throw Invalid(message: Self.reasonHelp(name)) }
            query.reason = reason
        }
        for field in Self.searchFields {
            guard let value = values[field] else { continue }
            guard value.utf8.count <= 128, !value.contains(where: { $0.isNewline }) else {
                throw Invalid(message: "\(field) is at most 128 characters on one line.")
            }
            switch field {
            case "eventId": query.eventId = value
            case "originalTransactionId": query.originalTransactionId = value
            case "transactionId": query.transactionId = value
            case "bundleId": query.bundleId = value
            case "type": query.type = value
            default: query.text = value.trimmingSpaces
            }
        }
        sinceText = values["since"]
        untilText = values["until"]
        query.since = try sinceText.map { (text) throws(Invalid) in try Self.time(text, "since", now: now) }
        query.until = try untilText.map { (text) throws(Invalid) in try Self.time(text, "until", now: now) }
        limit = defaultLimit
        if let text = values["limit"] {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw Invalid(message: "limit must be a whole number from 1 to \(maxLimit).")
            }
            limit = value
        }
        if let text = values["cursor"] {
            guard Self.isWellFormedCursor(text) else {
                throw Invalid(message: "cursor is not one this server issued; start again without it.")
            }
            cursor = text
        }
    }

    /// The query pairs these filters came from (search and time only), to keep them in links.
    /// `resolvedTimes`: `since`/`until` as the absolute times they meant when the page was
    /// shown, for forms that act on what the page showed (an age such as `1h` would mean
    /// something else by the time the form is posted).
    func searchPairs(resolvedTimes: Bool = false) -> [(String, String)] {
        let since = resolvedTimes ? query.since?.iso8601 : sinceText
        let until = resolvedTimes ? query.until?.iso8601 : untilText
        var pairs: [(String, String)] = []
        for (name, value) in [("eventId", query.eventId), ("originalTransactionId", query.originalTransactionId),
                              ("transactionId", query.transactionId), ("bundleId", query.bundleId), ("type", query.type),
                              ("q", query.text), ("since", since), ("until", until)] {
            if let value { pairs.append((name, value)) }
        }
        return pairs
    }

    private static func time(_ text: String, _ name: String, now: Timestamp) throws(Invalid) -> Timestamp {
        if let time = Timestamp(iso8601: text) { return time }
        if let age = Duration(compact: text) { return Timestamp(milliseconds: now.milliseconds - age.wholeMilliseconds) }
        throw Invalid(message: "\(name) takes a time such as 2026-11-20T10:15:30Z or an age such as 24h or 7d, not '\(text)'.")
    }

    /// A reason filter by name: a stored reason, or `not-understood`.
    static func reason(_ name: String) -> DeadLetterReasonFilter? { DeadLetterReasonFilter(name: name) }

    static func reasonHelp(_ name: String) -> String {
        "reason \"\(name)\" is not one of " + DeadLetterReasonFilter.all.map(\.name).joined(separator: ", ") + "."
    }

    /// The store silently restarts from the top on a cursor it cannot read; a client that
    /// sent a damaged cursor must be told rather than be handed page one again. Cursors are
    /// base64url of `<createdAt ms>:<dead-letter id>`.
    static func isWellFormedCursor(_ cursor: String) -> Bool {
        guard cursor.utf8.count <= 128, let bytes = Base64.urlDecode(cursor) else { return false }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ":", maxSplits: 1)
        return parts.count == 2 && Int64(parts[0]) != nil && DeadLetterStore.isValidID(String(parts[1]))
    }
}
