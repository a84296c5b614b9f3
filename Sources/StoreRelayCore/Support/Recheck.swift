import Dispatch

/// Waits for state another component sets and announces to no one (a connection made, a
/// claim lapsed, a watch answering) without holding a thread: checks it on a timer, then
/// calls back.
public enum Recheck {
    /// Calls `completion` on `queue` once `condition` holds or `deadline` passes, checking
    /// it now and every `interval`; `completion` gets whether it held.
    public static func until(
        _ deadline: ContinuousClock.Instant, every interval: Duration = .milliseconds(10), on queue: DispatchQueue,
        _ condition: @escaping @Sendable () -> Bool, completion: @escaping @Sendable (Bool) -> Void
    ) {
        queue.async {
            if condition() { return completion(true) }
            guard ContinuousClock.now < deadline else { return completion(false) }
            queue.asyncAfter(deadline: .now() + interval.dispatchInterval) {
                until(deadline, every: interval, on: queue, condition, completion: completion)
            }
        }
    }
}
