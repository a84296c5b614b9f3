import StoreRelayCore

/// One try at delivering an event to a destination, as dead letters and the admin API show it:
/// `{"at":"<ISO-8601>","status":503|null,"error":"..."|null,"durationMs":12}`.
public struct DeliveryAttempt: Sendable, Hashable {
    public var at: Timestamp
    /// The HTTP status, when the destination answered.
    public var status: Int?
    /// What went wrong, in one sentence; nil on success.
    public var error: String?
    public var durationMs: Int64

    public init(at: Timestamp, status: Int? = nil, error: String? = nil, durationMs: Int64) {
        self.at = at
        self.status = status
        self.error = error
        self.durationMs = durationMs
    }

    public var json: JSONValue {
        [
            "at": .string(at.iso8601),
            "status": .integer(status.map { Int64($0) }),
            "error": .string(error),
            "durationMs": .integer(durationMs),
        ]
    }

    /// Compact form for progress records: the time as milliseconds.
    var progressJSON: JSONValue {
        ["at": .integer(at.milliseconds), "status": .integer(status.map { Int64($0) }),
         "error": .string(error), "durationMs": .integer(durationMs)]
    }

    init?(progressJSON json: JSONValue) {
        guard let at = json["at"]?.int64Value, let duration = json["durationMs"]?.int64Value else { return nil }
        self.init(at: Timestamp(milliseconds: at), status: json["status"]?.int64Value.map { Int($0) },
                  error: json["error"]?.stringValue, durationMs: duration)
    }

    package init?(json: JSONValue) {
        guard let at = json["at"]?.stringValue.flatMap(Timestamp.init(iso8601:)),
              let duration = json["durationMs"]?.int64Value else { return nil }
        self.init(at: at, status: json["status"]?.int64Value.map { Int($0) },
                  error: json["error"]?.stringValue, durationMs: duration)
    }
}

/// How one attempt ended, as the retry rules of SPEC "Delivery to webhooks" classify it.
public enum AttemptOutcome: Sendable, Equatable {
    /// 2xx, or the line is fsync'ed in the file queue.
    case delivered(DeliveryAttempt)
    /// Connect/TLS/read errors, timeouts, 408, 425, 429, 5xx: try again, no sooner than
    /// `retryAfter` when the destination said so.
    case retry(DeliveryAttempt, retryAfter: Duration?)
    /// Any other status: dead-letter at once (`rejected`).
    case reject(DeliveryAttempt)
    /// The event cannot be put into this destination's request at all (a header-bound field
    /// holds a character HTTP forbids; `error` names it): dead-letter at once (`rejected`).
    /// Nothing reached the destination, so its circuit breaker hears nothing of it: a poison
    /// event must not hold genuine ones back.
    case unsendable(DeliveryAttempt)

    public var attempt: DeliveryAttempt {
        switch self {
        case .delivered(let a), .retry(let a, _), .reject(let a), .unsendable(let a): a
        }
    }

    /// The `outcome` label of `storerelay_deliveries_total`; a failure that used up the
    /// budget is `exhausted`, told apart by the caller, which knows the budget.
    public var metricLabel: String {
        switch self {
        case .delivered: "delivered"
        case .retry: "retry"
        case .reject, .unsendable: "rejected"
        }
    }
}
