import StoreRelayCore

/// What a dead-letter listing is narrowed to: where it was going and why it stopped, and
/// what an operator has in hand about the notification (its id, the subscription's original
/// transaction, a transaction, the app, the type) and when. Every field is optional; all
/// given must match.
public struct DeadLetterQuery: Sendable, Equatable {
    public var destination: String?
    public var reason: DeadLetter.Reason?
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

    public init(destination: String? = nil, reason: DeadLetter.Reason? = nil, eventId: String? = nil,
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

    func matches(_ entry: DeadLetterEntry) -> Bool {
        func same(_ wanted: String?, _ actual: String?) -> Bool { wanted == nil || wanted == actual }
        return same(destination, entry.destination) && (reason == nil || reason == entry.reason)
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
