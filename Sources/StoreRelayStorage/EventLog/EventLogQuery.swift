import StoreRelayCore

/// What `GET /api/events` asks the log for; every field optional, all must match.
public struct EventLogQuery: Sendable, Equatable {
    /// A notificationUUID, originalTransactionId or transactionId, exactly.
    public var q: String?
    /// The bundle id.
    public var app: String?
    public var environment: String?
    public var type: String?
    /// Matches when a delivery of the event is in this state (to `destination` if given).
    public var state: EventSummary.State?
    public var destination: String?
    /// `since <= receivedAt < until`.
    public var since: Timestamp?
    public var until: Timestamp?

    public init(q: String? = nil, app: String? = nil, environment: String? = nil, type: String? = nil,
                state: EventSummary.State? = nil, destination: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil) {
        self.q = q
        self.app = app
        self.environment = environment
        self.type = type
        self.state = state
        self.destination = destination
        self.since = since
        self.until = until
    }

    public func matches(_ summary: EventSummary) -> Bool {
        if let q, summary.id != q && summary.originalTransactionId != q && summary.transactionId != q { return false }
        if let app, summary.bundleId != app { return false }
        if let environment, summary.environment != environment { return false }
        if let type, summary.type != type { return false }
        if let since, summary.receivedAt < since { return false }
        if let until, summary.receivedAt >= until { return false }
        if state != nil || destination != nil {
            return summary.deliveries.contains { delivery in
                (state == nil || delivery.state == state) && (destination == nil || delivery.destination == destination)
            }
        }
        return true
    }

    /// Whether a segment holding `firstAt...lastAt` can hold a match.
    func overlaps(firstAt: Int64, lastAt: Int64) -> Bool {
        if let since, lastAt < since.milliseconds { return false }
        if let until, firstAt >= until.milliseconds { return false }
        return true
    }
}

/// Where a page of the list stopped: the segment and ordinal of the last record it looked
/// at; the next page starts with the record before it. Written `<sequence>-<ordinal>`.
/// Cluster mode's log on the server reads the two numbers as the `receivedAt` (ms) of the
/// last item and how many items with that time were given.
public struct EventLogCursor: Sendable, Hashable, CustomStringConvertible {
    public var sequence: UInt64
    public var ordinal: Int

    public init(sequence: UInt64, ordinal: Int) {
        self.sequence = sequence
        self.ordinal = ordinal
    }

    /// Parses a cursor this log gave out; nil for anything else.
    public init?(_ text: String) {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts.allSatisfy({ !$0.isEmpty && $0.count <= 20 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let sequence = UInt64(parts[0]), let ordinal = UInt32(parts[1])
        else { return nil }
        self.init(sequence: sequence, ordinal: Int(ordinal))
    }

    public var description: String { "\(sequence)-\(ordinal)" }

    /// Whether the record at (`sequence`, `ordinal`) comes after this cursor, newest first.
    func isBefore(sequence: UInt64, ordinal: Int) -> Bool {
        (sequence, ordinal) < (self.sequence, self.ordinal)
    }
}

/// One page of the list, newest first.
public struct EventLogPage: Sendable {
    public var items: [EventSummary]
    /// Where the next page starts; nil on the last page. A page may hold fewer than the
    /// limit with a cursor when a filtered scan used its budget (`EventLogOptions.scanBudget`).
    public var nextCursor: EventLogCursor?

    public init(items: [EventSummary], nextCursor: EventLogCursor?) {
        self.items = items
        self.nextCursor = nextCursor
    }

    public var json: JSONValue {
        .object(JSONObject([("items", .array(items.map(\.json))), ("nextCursor", .string(nextCursor?.description))]))
    }
}
