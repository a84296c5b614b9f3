import StoreRelayCore

/// When to try again: exponential backoff with jitter between a destination's `backoff`
/// bounds, never sooner than a `Retry-After` the destination asked for.
public struct RetrySchedule: Sendable, Equatable {
    public var initial: Duration
    public var maximum: Duration

    public init(initial: Duration, maximum: Duration) {
        self.initial = initial
        self.maximum = max(initial, maximum)
    }

    /// The delay after the `failures`-th consecutive failure (1 for the first): the ceiling
    /// `initial · 2^(failures-1)`, capped at `maximum`, then "equal jitter" — half fixed, half
    /// random — so retries of many events spread out instead of arriving in waves, yet never
    /// fall below `initial`.
    public func delay(afterFailures failures: Int, random: inout some RandomNumberGenerator) -> Duration {
        let initialMs = initial.wholeMilliseconds, maximumMs = maximum.wholeMilliseconds
        let exponent = min(max(failures - 1, 0), 40)
        let ceiling = min(maximumMs, initialMs.multipliedReportingOverflow(by: 1 << exponent).overflow
            ? maximumMs : initialMs << exponent)
        let half = ceiling / 2
        let jittered = half + (ceiling - half > 0 ? Int64.random(in: 0...(ceiling - half), using: &random) : 0)
        return .milliseconds(max(initialMs, min(maximumMs, jittered)))
    }

    public func delay(afterFailures failures: Int) -> Duration {
        var generator = SystemRandomNumberGenerator()
        return delay(afterFailures: failures, random: &generator)
    }
}

/// `Retry-After` (RFC 9110 §10.2.3): delay-seconds or an HTTP-date.
public enum RetryAfter {
    /// The delay the header asks for, measured from `now`; nil when absent or unparseable.
    /// A date in the past means "now" (zero).
    public static func parse(_ value: String?, now: Timestamp) -> Duration? {
        guard let value = value?.trimmingSpaces, !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            guard let seconds = Int64(value) else { return .seconds(Int64.max / 1_000_000_000_000) }
            return .seconds(seconds)
        }
        guard let date = Timestamp(httpDate: value) else { return nil }
        return .milliseconds(max(0, date.milliseconds - now.milliseconds))
    }
}

extension String {
    var trimmingSpaces: String {
        var slice = self[...]
        while slice.first == " " || slice.first == "\t" { slice.removeFirst() }
        while slice.last == " " || slice.last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
