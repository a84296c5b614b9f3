/// The options every destination kind that delivers over a network takes (SPEC "Delivery to
/// webhooks", "Destinations beyond webhooks"): what the message holds and how long and how
/// often to try. Kept apart from each kind's own options so a new kind parses, reports and
/// retries them the same way.
public struct DeliveryOptions: Sendable, Hashable {
    /// What the message body holds.
    public enum Format: String, Sendable, Hashable {
        /// The normalized event JSON (default).
        case normalized
        /// Apple's original body, byte for byte.
        case apple
        /// `{"text": ...}`, one line a person reads, for chat webhooks (Slack, Mattermost,
        /// Google Chat); webhook destinations only.
        case slack
    }

    /// Whether events of one subscription wait for each other (SPEC "Delivery controls").
    public enum Order: String, Sendable, Hashable {
        /// Events go out as soon as they are due, up to `concurrency` at once (default).
        case none
        /// Events of one `originalTransactionId` go one at a time, in acceptance order.
        case perSubscription = "per-subscription"
    }

    /// Body format; default normalized.
    public var format: Format = .normalized
    /// Whether normalized events carry Apple's body in `raw`; default no.
    public var includeRaw: Bool = false

    /// Whether what the destination receives holds Apple's body (`format apple`, or
    /// `include-raw yes`): an event held without it cannot be sent there again.
    public var sendsAppleBody: Bool { format == .apple || includeRaw }
    /// Limit for one attempt, connect to answer; default 10s.
    public var timeout: Duration = .seconds(10)
    /// Attempts in flight at once to this destination; default 4.
    public var concurrency: Int = 4
    /// Attempts before dead-lettering with reason `exhausted`; default 12.
    public var maxAttempts: Int = 12
    /// First retry delay (exponential backoff with jitter starts here); default 1s.
    public var backoffInitial: Duration = .seconds(1)
    /// Largest retry delay; default 1h.
    public var backoffMaximum: Duration = .seconds(3600)
    /// Age after which an event is dead-lettered however many attempts it had; default 72h.
    public var maxAge: Duration = .seconds(72 * 3600)
    /// Attempts started per second or minute, retries included; nil (default): no limit
    /// but `concurrency`.
    public var rate: DeliveryRate?

    /// Default none.
    public var order: Order = .none

    public init() {}

    /// The option names `ConfigParser.deliveryOption` reads, in the order errors list them.
    public static let names = ["format", "include-raw", "timeout", "concurrency", "max-attempts", "backoff", "max-age", "rate", "order"]
}
