/// `rate N/s` or `rate N/m` (SPEC "Delivery controls"): at most `count` attempts started per
/// `period` at one destination, retries included.
///
/// Per minute is accepted beside per second because the downstreams that need a limit most
/// (a partner's API with a quota, a chat webhook) state theirs per minute, and `rate 1/s`
/// cannot say "30 a minute".
public struct DeliveryRate: Sendable, Hashable, CustomStringConvertible {
    /// Attempts per `period`.
    public var count: Int
    /// One second or one minute.
    public var period: Duration

    public init(count: Int, period: Duration) {
        self.count = count
        self.period = period
    }

    /// The sustained rate.
    public var perSecond: Double {
        let (seconds, attoseconds) = period.components
        return Double(count) / (Double(seconds) + Double(attoseconds) / 1e18)
    }

    /// Attempts that may start back to back after a quiet spell: a tenth of a second's worth,
    /// at least one. Small, so any one-second window holds at most `count + burst` attempts
    /// for a per-second rate; not one, so a timer that fires a few milliseconds late does not
    /// lose the tokens of the wait.
    public var burst: Int { max(1, Int((perSecond / 10).rounded(.up))) }

    /// `50/s`, `30/m`: as written in `routes.conf`.
    public var description: String { "\(count)/\(period == .seconds(60) ? "m" : "s")" }

    /// Parses `N/s` or `N/m`, N from 1 to 1,000,000.
    static func parse(_ text: String) throws(ConfigValueError) -> DeliveryRate {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        let expected = "expected N/s or N/m, e.g. rate 50/s"
        guard parts.count == 2 else { throw ConfigValueError("'\(text)' is not a rate (\(expected))") }
        let period: Duration
        switch parts[1] {
        case "s": period = .seconds(1)
        case "m": period = .seconds(60)
        default: throw ConfigValueError("'\(parts[1])' is not a unit of a rate (\(expected))")
        }
        let count = try ConfigValue.integer(String(parts[0]), in: 1...1_000_000)
        return DeliveryRate(count: count, period: period)
    }
}
