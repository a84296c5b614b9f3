import StoreRelayCore

/// Where dead letters are kept and read back: one file each under `DATA/dead-letters` in
/// single-node mode (`DeadLetterStore`), the shared server in cluster mode. The admin API,
/// page and `dlq` CLI see them only through this.
///
/// `async` because the cluster's archive waits for the server: an admin request suspends
/// instead of holding a thread. The file store answers synchronously (its methods satisfy
/// these as they are); call it from the admin listener's queue, never a connection's.
public protocol DeadLetterArchive: Sendable {
    /// The dead letter `id`, or nil.
    func letter(id: String) async -> DeadLetter?
    /// Removes dead letter `id`; true when it existed.
    @discardableResult func delete(id: String) async -> Bool
    /// Dead letters matching `query`, newest first, at most `limit`, starting after `cursor`
    /// (an opaque string from a previous page); also the cursor of the next page, if any.
    func list(_ query: DeadLetterQuery, limit: Int, cursor: String?) async -> (items: [DeadLetter], nextCursor: String?)
    /// How many dead letters there are, by destination (`nil` key: unrouted and quarantined).
    var countsByDestination: [String?: Int] { get async }
    /// The dead letters of event `eventId`, one per destination that gave up on it.
    func letters(forEvent eventId: String) async -> [DeadLetter]
}

/// What listings filter and sort dead letters by: a few fields of each letter, small enough
/// to keep for every letter (in memory, or in one hash on the cluster server).
package struct DeadLetterEntry: Sendable, Hashable {
    package var id: String
    package var eventId: String
    package var createdAt: Int64
    package var destination: String?
    package var reason: DeadLetter.Reason
    /// What an operator searches by, from the letter's event (nil when it has none).
    package var type: String?
    package var bundleId: String?
    package var originalTransactionId: String?
    package var transactionId: String?
    /// A quarantined letter of a notification this build could not read
    /// (`DeadLetterReasonFilter.notUnderstood`).
    package var notUnderstood: Bool

    package init(_ letter: DeadLetter) {
        let event = letter.notification?.event
        id = letter.id
        eventId = letter.eventId
        createdAt = letter.createdAt.milliseconds
        destination = letter.destination
        reason = letter.reason
        type = event?.type
        bundleId = event?.bundleId
        originalTransactionId = event?.originalTransactionId
        // The one field the event does not keep apart: read from its JSON (a dead letter is rare).
        transactionId = event?.json["transaction"]?["transactionId"]?.stringValue
        notUnderstood = letter.reason == .quarantined && letter.notification?.disposition.isNotUnderstood == true
        if notUnderstood, let body = letter.notification?.body, originalTransactionId == nil || transactionId == nil {
            // Its event holds only the outer payload; the operator still has the ids in hand.
            let nested = Self.nestedIdentifiers(body)
            originalTransactionId = originalTransactionId ?? nested.originalTransactionId
            transactionId = transactionId ?? nested.transactionId
        }
    }

    package var json: JSONValue {
        [
            "id": .string(id), "eventId": .string(eventId), "createdAt": .integer(createdAt), "destination": .string(destination),
            "reason": .string(reason.rawValue), "type": .string(type), "bundleId": .string(bundleId),
            "originalTransactionId": .string(originalTransactionId), "transactionId": .string(transactionId),
            "notUnderstood": .bool(notUnderstood),
        ]
    }

    package init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let eventId = json["eventId"]?.stringValue,
              let createdAt = json["createdAt"]?.int64Value,
              let reason = json["reason"]?.stringValue.flatMap(DeadLetter.Reason.init(rawValue:))
        else { return nil }
        self.id = id
        self.eventId = eventId
        self.createdAt = createdAt
        self.reason = reason
        destination = json["destination"]?.stringValue
        type = json["type"]?.stringValue
        bundleId = json["bundleId"]?.stringValue
        originalTransactionId = json["originalTransactionId"]?.stringValue
        transactionId = json["transactionId"]?.stringValue
        notUnderstood = json["notUnderstood"]?.boolValue ?? false
    }

    /// One page of `entries` matching `query`, newest first, after `cursor`; and the next
    /// page's cursor when more match.
    package static func page(
        _ entries: some Sequence<DeadLetterEntry>, _ query: DeadLetterQuery, limit: Int, cursor: String?
    ) -> (entries: [DeadLetterEntry], nextCursor: String?) {
        var collector = PageCollector(query, limit: limit, cursor: cursor)
        collector.consider(entries)
        return collector.page
    }

    /// Builds one page of dead letters from entries offered in any order and in any number of
    /// batches (the cluster server's index arrives a scan at a time), keeping at most twice
    /// the page and one entry more between trims: memory follows the page size, not the
    /// number of letters, and the cost is a sort of that much per page's worth of matches.
    package struct PageCollector {
        private let query: DeadLetterQuery
        private let limit: Int
        private let after: (createdAt: Int64, id: String)?
        /// The page and one entry more: whether a next page exists.
        private let capacity: Int
        /// Candidates, unordered; trimmed to the newest `capacity` once it holds twice that.
        private var kept: [DeadLetterEntry] = []
        /// After a trim that filled the page: an entry no newer than this one cannot make it.
        private var floor: (createdAt: Int64, id: String)?

        package init(_ query: DeadLetterQuery, limit: Int, cursor: String?) {
            self.query = query
            self.limit = max(0, limit)
            capacity = self.limit < Int.max ? self.limit + 1 : Int.max
            after = cursor.flatMap(DeadLetterEntry.decodeCursor)
        }

        package mutating func consider(_ entries: some Sequence<DeadLetterEntry>) {
            for entry in entries where query.matches(entry) {
                let key = (entry.createdAt, entry.id)
                if let after, !(key < after) { continue }
                if let floor, !(key > floor) { continue }
                kept.append(entry)
                if kept.count >= (capacity < Int.max / 2 ? 2 * capacity : Int.max) { trim() }
            }
        }

        private mutating func trim() {
            kept.sort { ($0.createdAt, $0.id) > ($1.createdAt, $1.id) }
            guard kept.count >= capacity else { return }
            kept.removeLast(kept.count - capacity)
            floor = kept.last.map { ($0.createdAt, $0.id) }
        }

        package var page: (entries: [DeadLetterEntry], nextCursor: String?) {
            var sorted = self
            sorted.trim()
            let page = Array(sorted.kept.prefix(limit))
            return (page, sorted.kept.count > page.count ? page.last.map(DeadLetterEntry.encodeCursor) : nil)
        }
    }

    fileprivate static func encodeCursor(_ entry: DeadLetterEntry) -> String {
        Base64.urlEncode(Array("\(entry.createdAt):\(entry.id)".utf8))
    }

    fileprivate static func decodeCursor(_ cursor: String) -> (createdAt: Int64, id: String)? {
        guard let bytes = Base64.urlDecode(cursor) else { return nil }
        let parts = String(decoding: bytes, as: UTF8.self).split(separator: ":", maxSplits: 1)
        guard parts.count == 2, let createdAt = Int64(parts[0]), DeadLetterStore.isValidID(String(parts[1])) else { return nil }
        return (createdAt, String(parts[1]))
    }
}
