import StoreRelayCore

/// What a dead-letter listing is narrowed to: where it was going and why it stopped, and
/// what an operator has in hand about the notification (its id, the subscription's original
/// transaction, a transaction, the app, the type) and when. Every field is optional; all
/// given must match.
public struct DeadLetterQuery: Sendable, Equatable {
    public var destination: String?
    public var reason: DeadLetterReasonFilter?
    public var eventId: String?
    public var originalTransactionId: String?
    public var transactionId: String?
    public var bundleId: String?
    public var type: String?
    /// Whatever the operator pasted into the page's search box: matches a letter whose id,
    /// event id, original transaction id, transaction id, bundle id or type it equals.
    public var text: String?
    /// Letters created at or after this time.
    public var since: Timestamp?
    /// Letters created before this time.
    public var until: Timestamp?
    /// Leaves quarantined letters out whatever else matches (see `bulkReplayScope`).
    public var excludesQuarantined = false

    public init(destination: String? = nil, reason: DeadLetterReasonFilter? = nil, eventId: String? = nil,
                originalTransactionId: String? = nil, transactionId: String? = nil, bundleId: String? = nil,
                type: String? = nil, since: Timestamp? = nil, until: Timestamp? = nil) {
        self.destination = destination
        self.reason = reason
        self.eventId = eventId
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.bundleId = bundleId
        self.type = type
        self.since = since
        self.until = until
    }

    /// The letters a bulk replay of this query takes. Quarantined letters are notifications
    /// the configuration turned away (or stale, or not understood): replaying them is a
    /// decision about each kind, never a side effect of "replay everything", so they are
    /// taken only when the query asks for them by reason.
    public var bulkReplayScope: DeadLetterQuery {
        var scope = self
        if reason == nil { scope.excludesQuarantined = true }
        return scope
    }

    /// Whether `letter`, as read, is one of the query's, judged by what it holds (not what an
    /// index says of it), and for the time range by `createdAt`, the moment the listing
    /// sorted it by. Cluster mode's index is not sealed: whoever can write to the server
    /// could make it name another event or destination.
    package func admits(_ letter: DeadLetter, createdAt: Int64? = nil) -> Bool {
        var entry = DeadLetterEntry(letter)
        if let createdAt { entry.createdAt = createdAt }
        return matches(entry) && (letter.notification.map { $0.id == letter.eventId } ?? true)
    }

    /// The same query without its time range: for a letter read again after it was listed
    /// (a tampered one reads with the time it was read).
    package var ignoringTime: DeadLetterQuery {
        var query = self
        query.since = nil
        query.until = nil
        return query
    }

    func matches(_ entry: DeadLetterEntry) -> Bool {
        func same(_ wanted: String?, _ actual: String?) -> Bool { wanted == nil || wanted == actual }
        return same(destination, entry.destination) && (reason?.matches(entry) ?? true)
            && !(excludesQuarantined && entry.reason == .quarantined)
            && same(eventId, entry.eventId) && same(originalTransactionId, entry.originalTransactionId)
            && same(transactionId, entry.transactionId) && same(bundleId, entry.bundleId) && same(type, entry.type)
            && text.map { text in
                [entry.id, entry.eventId, entry.originalTransactionId, entry.transactionId, entry.bundleId, entry.type]
                    .contains { $0 == text }
            } ?? true
            && since.map { entry.createdAt >= $0.milliseconds } ?? true
            && until.map { entry.createdAt < $0.milliseconds } ?? true
    }
}

/// What a listing's reason filter picks: the letters stored with one reason, or
/// `not-understood`, the quarantined letters of notifications Apple signed that this build
/// could not read. Those are stored as `quarantined` (their detail starts "not understood: ")
/// beside configuration slips and stale notifications, but they call for something else (an
/// upgrade, then a replay), so an operator looks for them on their own.
public enum DeadLetterReasonFilter: Sendable, Hashable, CustomStringConvertible {
    case stored(DeadLetter.Reason)
    case notUnderstood

    /// Every filter, in the order the page and `--help` offer them.
    public static let all: [DeadLetterReasonFilter] = DeadLetter.Reason.allCases.map(Self.stored) + [.notUnderstood]

    /// The filter's name in query strings, the CLI and the page: a reason's raw value, or
    /// `not-understood`.
    public var name: String {
        switch self {
        case .stored(let reason): reason.rawValue
        case .notUnderstood: "not-understood"
        }
    }

    public var description: String { name }

    public init?(name: String) {
        if let reason = DeadLetter.Reason(rawValue: name) {
            self = .stored(reason)
        } else if name == "not-understood" {
            self = .notUnderstood
        } else {
            return nil
        }
    }

    func matches(_ entry: DeadLetterEntry) -> Bool {
        switch self {
        case .stored(let reason): entry.reason == reason
        case .notUnderstood: entry.reason == .quarantined && entry.notUnderstood
        }
    }
}
