import StoreRelayConfig
import StoreRelayCore

/// The `rate` of a destination as a token bucket with injected time: each attempt started
/// spends a token, tokens come back at the rate, and the bucket holds at most `burst`. No I/O
/// and no timer: its owner asks when the next token comes and arms its own timer for it.
///
/// Spending may go below zero: an owner that must start attempts it did not pace itself
/// (cluster entries claimed from a dead instance) spends them anyway, and the debt delays the
/// ones after, so the rate holds over time.
struct TokenBucket: Sendable {
    let perSecond: Double
    let capacity: Double
    private var tokens: Double
    /// When `tokens` was last brought up to date; nil: never used, full.
    private var updated: Timestamp?

    init(_ rate: DeliveryRate) {
        perSecond = rate.perSecond
        capacity = Double(rate.burst)
        tokens = capacity
    }

    /// The tokens at `now`, refilled since the last update (a clock that went back refills
    /// nothing).
    private func tokens(at now: Timestamp) -> Double {
        guard let updated else { return capacity }
        let elapsed = Double(max(0, now.milliseconds - updated.milliseconds)) / 1000
        return min(capacity, tokens + elapsed * perSecond)
    }

    /// Whole tokens at `now`: attempts that may start now.
    func available(at now: Timestamp) -> Int { max(0, Int(tokens(at: now).rounded(.down))) }

    /// `count` attempts start at `now`.
    mutating func spend(_ count: Int, at now: Timestamp) {
        tokens = tokens(at: now) - Double(count)
        updated = max(updated ?? now, now)
    }

    /// When the next whole token is there; nil when one is there at `now`.
    func nextToken(at now: Timestamp) -> Timestamp? {
        let missing = 1 - tokens(at: now)
        guard missing > 0 else { return nil }
        return now.advanced(by: .milliseconds(Int64((missing / perSecond * 1000).rounded(.up))))
    }
}
