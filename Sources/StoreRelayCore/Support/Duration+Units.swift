import Dispatch

/// Conversions of `Duration` (what configuration and APIs carry) into the units the system
/// calls and stored records use, all saturating instead of trapping: a configured `365d` or
/// `Duration.seconds(.max)` must mean "a very long time", never a crash.
extension Duration {
    /// Whole milliseconds (sub-millisecond parts dropped), saturating at `Int64.min/max`.
    public var wholeMilliseconds: Int64 {
        let (seconds, attoseconds) = components
        let (milliseconds, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return seconds < 0 ? .min : .max }
        return milliseconds + attoseconds / 1_000_000_000_000_000
    }

    /// Whole nanoseconds, clamped at zero and saturating: for `DispatchTime` arithmetic.
    public var wholeNanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0, attoseconds >= 0 || seconds > 0 else { return 0 }
        let (nanoseconds, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return .max }
        let (total, overflowAgain) = nanoseconds.addingReportingOverflow(UInt64(max(0, attoseconds) / 1_000_000_000))
        return overflowAgain ? .max : total
    }

    /// One number and one unit, as an operator types an age: `500ms`, `45s`, `90m`, `12h`,
    /// `30d`, `2w`. nil for anything else, or for an age too long to express.
    public init?(compact text: String) {
        let units: [(String, Int64)] = [("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000), ("w", 604_800_000)]
        for (suffix, scale) in units where text.hasSuffix(suffix) {
            let digits = text.dropLast(suffix.count)
            guard !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }), let value = Int64(digits),
                  value <= Int64.max / scale else { continue }
            self = .milliseconds(value * scale)
            return
        }
        return nil
    }

    /// Dispatch's interval, rounded down to nanoseconds; `.never` when too long to express.
    public var dispatchInterval: DispatchTimeInterval {
        let nanoseconds = wholeNanoseconds
        return nanoseconds > UInt64(Int.max) ? .never : .nanoseconds(Int(nanoseconds))
    }
}

extension Timestamp {
    /// This instant moved by `duration` (saturating).
    public func advanced(by duration: Duration) -> Timestamp {
        let (sum, overflow) = milliseconds.addingReportingOverflow(duration.wholeMilliseconds)
        return Timestamp(milliseconds: overflow ? (duration < .zero ? .min : .max) : sum)
    }

    /// How long after `earlier` this instant is (negative when before it).
    public func duration(since earlier: Timestamp) -> Duration {
        .milliseconds(milliseconds &- earlier.milliseconds)
    }
}

extension DispatchTime {
    /// This time moved later by `duration` (saturating; a negative duration counts as zero).
    public func advanced(by duration: Duration) -> DispatchTime {
        let (sum, overflow) = uptimeNanoseconds.addingReportingOverflow(duration.wholeNanoseconds)
        return DispatchTime(uptimeNanoseconds: overflow ? .max : sum)
    }
}
