import StoreRelayCore

/// One event and where each of its deliveries stands, for `/api/events/{id}`.
public struct EventDeliveryState: Sendable {
    public enum Phase: String, Sendable {
        /// Waiting for its next attempt (or its first).
        case pending
        case delivered
        case deadLettered = "dead-lettered"
    }

    public struct Delivery: Sendable {
        public var destination: String
        public var phase: Phase
        public var attempts: [DeliveryAttempt]
        public var nextAttempt: Timestamp?
        public var deadLetterId: String?

        public init(destination: String, phase: Phase, attempts: [DeliveryAttempt], nextAttempt: Timestamp?, deadLetterId: String?) {
            self.destination = destination
            self.phase = phase
            self.attempts = attempts
            self.nextAttempt = nextAttempt
            self.deadLetterId = deadLetterId
        }

        /// Reads `json` back (as cluster mode keeps it on the server).
        package init?(json: JSONValue) {
            guard let destination = json["destination"]?.stringValue,
                  let phase = json["state"]?.stringValue.flatMap(Phase.init(rawValue:)) else { return nil }
            self.init(destination: destination, phase: phase,
                      attempts: json["attempts"]?.arrayValue?.compactMap(DeliveryAttempt.init(json:)) ?? [],
                      nextAttempt: json["nextAttemptAt"]?.stringValue.flatMap(Timestamp.init(iso8601:)),
                      deadLetterId: json["deadLetterId"]?.stringValue)
        }

        public var json: JSONValue {
            [
                "destination": .string(destination),
                "state": .string(phase.rawValue),
                "attempts": .array(attempts.map(\.json)),
                "nextAttemptAt": .string(nextAttempt?.iso8601),
                "deadLetterId": .string(deadLetterId),
            ]
        }
    }

    public var notification: StoredNotification
    public var deliveries: [Delivery]
    /// False when the event is older than the window of recent events and only its dead
    /// letters are known: deliveries that succeeded are not listed then.
    public var allDeliveriesKnown = true

    public init(notification: StoredNotification, deliveries: [Delivery], allDeliveriesKnown: Bool = true) {
        self.notification = notification
        self.deliveries = deliveries
        self.allDeliveriesKnown = allDeliveriesKnown
    }

    /// An event known only by its dead letters (older than the window of recent events): one
    /// dead-lettered delivery per letter of event `eventId` (others are left out: an index
    /// may name the wrong ones); nil when none holds the event.
    package init?(deadLetters: [DeadLetter], eventId: String) {
        let letters = deadLetters.filter { $0.eventId == eventId && ($0.notification.map { $0.id == eventId } ?? true) }
        guard let notification = letters.lazy.compactMap(\.notification).first else { return nil }
        let deliveries = letters.map { letter in
            Delivery(destination: letter.destination ?? "", phase: .deadLettered, attempts: letter.attempts, nextAttempt: nil,
                     deadLetterId: letter.id)
        }
        self.init(notification: notification, deliveries: deliveries, allDeliveriesKnown: false)
    }

    public var json: JSONValue {
        var disposition: JSONValue = "accepted"
        var reason: JSONValue = .null
        if case .quarantine(let why) = notification.disposition {
            disposition = "quarantined"
            reason = .string(why)
        }
        return [
            "id": .string(notification.id),
            "receivedAt": .string(notification.receivedAt.iso8601),
            "disposition": disposition,
            "quarantineReason": reason,
            "event": .object(notification.event.json),
            "deliveries": .array(deliveries.map(\.json)),
            "deliveriesKnown": .string(allDeliveriesKnown ? "all" : "dead-lettered only"),
        ]
    }
}
