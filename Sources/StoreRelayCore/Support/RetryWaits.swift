import Dispatch

/// The waits between a client's retries, as timers that one `cancel()` ends at once: no
/// thread sleeps through a backoff, and a stopping gateway need not wait for one. Shared by
/// the App Store Server API client and Google Play enrichment.
public final class RetryWaits: Sendable {
    private struct State {
        var cancelled = false
        var lastID = 0
        var pending: [Int: (timer: DispatchWorkItem, resume: @Sendable (Bool) -> Void)] = [:]
    }
    private let state = Locked(State())
    /// Where the timers fire: they only start the next attempt.
    private let queue: DispatchQueue

    public init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Whether `cancel()` came: a caller asks before each attempt.
    public var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Calls `resume(true)` after `duration`, or `resume(false)` at once if `cancel()` comes
    /// first (or came already).
    public func pause(_ duration: Duration, then resume: @escaping @Sendable (Bool) -> Void) {
        let state = state
        let timer = state.withLock { waits -> DispatchWorkItem? in
            guard !waits.cancelled else { return nil }
            waits.lastID += 1
            let id = waits.lastID
            let timer = DispatchWorkItem {
                // Whoever removes the wait resumes it: this timer, or `cancel()`.
                guard state.withLock({ $0.pending.removeValue(forKey: id) }) != nil else { return }
                resume(true)
            }
            waits.pending[id] = (timer, resume)
            return timer
        }
        guard let timer else { return resume(false) }
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(clamping: duration.wholeMilliseconds)), execute: timer)
    }

    /// Ends every wait at once, each resumed with `false`; later pauses resume `false` at once.
    public func cancel() {
        let waiting = state.withLock { waits in
            waits.cancelled = true
            defer { waits.pending = [:] }
            return Array(waits.pending.values)
        }
        for wait in waiting {
            wait.timer.cancel()
            wait.resume(false)
        }
    }

    /// Exponential from `first`, doubling up to `maximum`, plus up to half again at random
    /// (still capped), so the retries of many callers spread out.
    public static func backoff(
        afterFailures failures: Int, first: Duration, maximum: Duration, random: inout some RandomNumberGenerator
    ) -> Duration {
        let first = first.wholeMilliseconds
        let maximum = maximum.wholeMilliseconds
        let ceiling = min(maximum, first << min(max(failures, 1) - 1, 20))
        return .milliseconds(min(maximum, ceiling + Int64.random(in: 0...max(0, ceiling / 2), using: &random)))
    }
}
