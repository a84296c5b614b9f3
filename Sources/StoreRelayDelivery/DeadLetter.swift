import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore

/// One event for one destination that could not be delivered (SPEC "Dead letters"):
/// `{id, eventId, destination, reason, createdAt, attempts:[{at,status,error,durationMs}], event}`,
/// plus `detail` (why, in a sentence) and `appleBody` (Apple's original body, so a replay
/// to a `format apple` destination sends the same bytes).
public struct DeadLetter: Sendable {
    public enum Reason: String, Sendable, CaseIterable {
        /// `max-attempts` or `max-age` ran out.
        case exhausted
        /// The destination answered a status that is not retried.
        case rejected
        /// No route matched (or a routed destination no longer exists).
        case unrouted
        /// Genuinely Apple's but not for this gateway.
        case quarantined
        /// The journal record holding the event could not be read back (damaged or removed
        /// underneath the gateway); the letter keeps the event id, and cannot be replayed.
        case unreadable
        /// Cluster mode: a record on the server failed its `cluster-key` check (written or
        /// changed by something other than an instance, or sealed with a key this instance
        /// lacks); the letter keeps only the ids, and is replayed only as what it stands in
        /// for (kept aside on the server) once that checks out.
        case tampered
    }

    public var id: String
    public var eventId: String
    /// nil for `unrouted` and `quarantined`, which concern no destination.
    public var destination: String?
    public var reason: Reason
    public var detail: String?
    public var createdAt: Timestamp
    public var attempts: [DeliveryAttempt]
    /// The stored notification; nil only for `unreadable` and `tampered`, whose event could
    /// not be read or trusted.
    public var notification: StoredNotification?
    /// The bulk replays that wrote this letter again (their replay failed too), oldest
    /// first: a resumed replay does not take it a second time.
    public var replayedBy: [String] = []

    /// The id is derived from the event and destination, so writing the same dead letter
    /// twice (a crash between the write and its progress record) replaces rather than doubles it.
    public static func id(eventId: String, destination: String?) -> String {
        "dl-" + String(SHA256.hexHash(Array("\(eventId)\n\(destination ?? "")".utf8)).prefix(32))
    }

    public init(notification: StoredNotification, destination: String?, reason: Reason, detail: String?,
                attempts: [DeliveryAttempt], createdAt: Timestamp) {
        id = Self.id(eventId: notification.id, destination: destination)
        eventId = notification.id
        self.destination = destination
        self.reason = reason
        self.detail = detail
        self.createdAt = createdAt
        self.attempts = attempts
        self.notification = notification
    }

    /// A letter for an event whose journal record could not be read: what is known of it.
    public init(unreadableEventId eventId: String, destination: String, detail: String, attempts: [DeliveryAttempt],
                createdAt: Timestamp) {
        id = Self.id(eventId: eventId, destination: destination)
        self.eventId = eventId
        self.destination = destination
        reason = .unreadable
        self.detail = detail
        self.createdAt = createdAt
        self.attempts = attempts
        notification = nil
    }

    /// A letter for a record that failed its `cluster-key` check: nothing of it is kept but
    /// the ids, so nothing it says can be replayed. `letterId` keeps a tampered dead letter
    /// under its own id.
    public init(tamperedEventId eventId: String, destination: String?, detail: String, createdAt: Timestamp,
                letterId: String? = nil) {
        id = letterId ?? Self.id(eventId: eventId, destination: destination)
        self.eventId = eventId
        self.destination = destination
        reason = .tampered
        self.detail = detail
        self.createdAt = createdAt
        attempts = []
        notification = nil
    }

    /// The last error an attempt saw, or the detail.
    public var lastError: String? { attempts.last?.error ?? detail }

    public var json: JSONValue {
        [
            "id": .string(id),
            "eventId": .string(eventId),
            "destination": .string(destination),
            "reason": .string(reason.rawValue),
            "detail": .string(detail),
            "createdAt": .string(createdAt.iso8601),
            "attempts": .array(attempts.map(\.json)),
            "event": notification.map { .object($0.event.json) } ?? .null,
            "appleBody": .string(notification.map { String(decoding: $0.body, as: UTF8.self) }),
            "replayedBy": .array(replayedBy.map { .string($0) }),
        ]
    }

    package init?(json: JSONValue) {
        guard let id = json["id"]?.stringValue, let eventId = json["eventId"]?.stringValue,
              let reason = json["reason"]?.stringValue.flatMap(Reason.init(rawValue:)),
              let createdAt = json["createdAt"]?.stringValue.flatMap(Timestamp.init(iso8601:))
        else { return nil }
        self.id = id
        self.eventId = eventId
        self.reason = reason
        detail = json["detail"]?.stringValue
        self.createdAt = createdAt
        attempts = json["attempts"]?.arrayValue?.compactMap(DeliveryAttempt.init(json:)) ?? []
        replayedBy = json["replayedBy"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let destination = json["destination"]?.stringValue
        self.destination = destination
        if reason == .unreadable || reason == .tampered {
            notification = nil
            return
        }
        guard let eventObject = json["event"]?.objectValue,
              let event = try? NormalizedEvent(storedJSON: JSONValue.object(eventObject).serializedBytes())
        else { return nil }
        let receivedAt = (json["event"]?["receivedAt"]?.stringValue).flatMap(Timestamp.init(iso8601:)) ?? createdAt
        notification = StoredNotification(
            event: event, disposition: reason == .quarantined ? .quarantine(reason: detail ?? "quarantined") : .accept,
            destinations: destination.map { [$0] } ?? [], body: Array((json["appleBody"]?.stringValue ?? "").utf8),
            receivedAt: receivedAt)
    }
}
