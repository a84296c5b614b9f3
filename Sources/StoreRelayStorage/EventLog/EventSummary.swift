import StoreRelayCore

/// What the event log keeps of one accepted event: the identifiers an operator searches by,
/// the fields the list filters on, and where each delivery stands (SPEC "Event log").
///
/// Apple's body and the normalized event stay in the journal, the source of truth: a summary
/// is a few hundred bytes, so the log can hold a month of events on disk cheaply.
public struct EventSummary: Sendable, Hashable {
    /// Where one delivery of the event stands. The raw values are the bytes on disk and the
    /// words of the API (`state=` and each item's `deliveries`).
    public enum State: UInt8, Sendable, CaseIterable {
        case pending = 0
        case delivered = 1
        case deadLettered = 2

        public var name: String {
            switch self {
            case .pending: "pending"
            case .delivered: "delivered"
            case .deadLettered: "dead-lettered"
            }
        }

        public init?(name: String) {
            guard let state = Self.allCases.first(where: { $0.name == name }) else { return nil }
            self = state
        }
    }

    /// One destination the event was routed to, and its delivery's state.
    public struct Delivery: Sendable, Hashable {
        public var destination: String
        public var state: State

        public init(destination: String, state: State) {
            self.destination = destination
            self.state = state
        }
    }

    /// The notificationUUID (or a V1 body's hash), the event's id everywhere.
    public var id: String
    public var receivedAt: Timestamp
    public var type: String
    public var subtype: String?
    public var environment: String?
    public var bundleId: String?
    public var originalTransactionId: String?
    public var transactionId: String?
    /// In the order the route table named them; empty for an unrouted or quarantined event.
    public var deliveries: [Delivery]

    public init(id: String, receivedAt: Timestamp, type: String, subtype: String? = nil, environment: String? = nil,
                bundleId: String? = nil, originalTransactionId: String? = nil, transactionId: String? = nil,
                deliveries: [Delivery] = []) {
        self.id = id
        self.receivedAt = receivedAt
        self.type = type
        self.subtype = subtype
        self.environment = environment
        self.bundleId = bundleId
        self.originalTransactionId = originalTransactionId
        self.transactionId = transactionId
        self.deliveries = deliveries
    }

    /// The identifiers `q` matches, each indexed (the same string under two names is indexed once).
    var searchKeys: [String] {
        var keys = [id]
        for key in [originalTransactionId, transactionId] {
            if let key, !key.isEmpty, !keys.contains(key) { keys.append(key) }
        }
        return keys
    }

    /// One item of `GET /api/events`, in the SPEC's order.
    public var json: JSONValue {
        .object(JSONObject([
            ("id", .string(id)),
            ("receivedAt", .string(receivedAt.iso8601)),
            ("type", .string(type)),
            ("subtype", .string(subtype)),
            ("environment", .string(environment)),
            ("bundleId", .string(bundleId)),
            ("originalTransactionId", .string(originalTransactionId)),
            ("transactionId", .string(transactionId)),
            ("deliveries", .array(deliveries.map { delivery in
                .object(JSONObject([("destination", .string(delivery.destination)), ("state", .string(delivery.state.name))]))
            })),
        ]))
    }
}
