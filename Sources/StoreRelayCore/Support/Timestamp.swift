#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A point in wall-clock time with millisecond precision: milliseconds since the Unix epoch,
/// the unit Apple uses for every date in App Store payloads.
public struct Timestamp: Sendable, Hashable, Comparable {
    public var milliseconds: Int64

    public init(milliseconds: Int64) { self.milliseconds = milliseconds }
    public init(seconds: Int64) { self.milliseconds = seconds * 1000 }

    /// The current wall-clock time.
    public static func now() -> Timestamp {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Timestamp(milliseconds: Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec) / 1_000_000)
    }

    public var seconds: Int64 { milliseconds >= 0 ? milliseconds / 1000 : (milliseconds - 999) / 1000 }

    /// ISO-8601 in UTC with milliseconds, for example `2026-11-20T10:15:30.123Z`.
    public var iso8601: String {
        let secs = seconds
        let millis = Int(milliseconds - secs * 1000)
        var t = time_t(secs)
        var parts = tm()
        gmtime_r(&t, &parts)
        func pad(_ value: Int32, _ width: Int) -> String {
            let s = String(value)
            return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
        }
        return pad(parts.tm_year + 1900, 4) + "-" + pad(parts.tm_mon + 1, 2) + "-" + pad(parts.tm_mday, 2)
            + "T" + pad(parts.tm_hour, 2) + ":" + pad(parts.tm_min, 2) + ":" + pad(parts.tm_sec, 2)
            + "." + pad(Int32(millis), 3) + "Z"
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }
}

/// A source of the current wall-clock time, injected so tests never wait on the real one.
/// (Not called `Clock`: that is Swift's own protocol for measuring durations.)
public protocol TimeSource: Sendable {
    func now() -> Timestamp
}

/// The real wall clock.
public struct WallClock: TimeSource {
    public init() {}
    public func now() -> Timestamp { Timestamp.now() }
}

/// Monotonic time in nanoseconds, for timeouts and latency measurements.
public enum MonotonicClock {
    public static func nanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
