import StoreRelayDelivery
import StoreRelayCore

/// The filters and paging of a dead-letter listing, from a query string
/// (`destination=&reason=&limit=&cursor=`), validated.
struct DeadLetterFilters: Equatable {
    struct Invalid: Error {
        let message: String
    }

    var destination: String?
    var reason: DeadLetter.Reason?
    var limit: Int
    var cursor: String?

    init(destination: String? = nil, reason: DeadLetter.Reason? = nil, limit: Int, cursor: String? = nil) {
        self.destination = destination
        self.reason = reason
        self.limit = limit
        self.cursor = cursor
    }

    /// Empty values count as absent (a GET form sends `destination=` for "any").
    init(query: String?, defaultLimit: Int, maxLimit: Int) throws(Invalid) {
        var values: [String: String] = [:]
        for pair in FormEncoding.decode(query ?? "") where values[pair.name] == nil {
            values[pair.name] = pair.value
        }
        destination = values["destination"].flatMap { $0.isEmpty ? nil : $0 }
        if let name = values["reason"], !name.isEmpty {
            guard let reason = Self.reason(name) else { throw Invalid(message: Self.reasonHelp(name)) }
            self.reason = reason
        }
        limit = defaultLimit
        if let text = values["limit"], !text.isEmpty {
            guard let value = Int(text), (1...maxLimit).contains(value) else {
                throw Invalid(message: "limit must be a whole number from 1 to \(maxLimit).")
            }
            limit = value
        }
        if let text = values["cursor"], !text.isEmpty {
            guard Self.isWellFormedCursor(text) else {
                throw Invalid(message: "cursor is not one this server issued; start again without it.")
            }
            cursor = text
        }
    }

    static func reason(_ name: String) -> DeadLetter.Reason? { DeadLetter.Reason(rawValue: name) }

    static func reasonHelp(_ name: String) -> String {
        "reason \"\(name)\" is not one of " + DeadLetter.Reason.allCases.map(\.rawValue).joined(separator: ", ") + "."
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
