import Dispatch
import StoreRelayCore

/// Counts occurrences per key (a destination, a kind of record) and hands each key's counts
/// on once a window: a destination that dead-letters a thousand events in a minute sends one
/// `dead_letter.created` with `count: 1000`, not a thousand (SPEC: "batched per destination
/// per minute").
final class CountBatcher: Sendable {
    /// Key, and the count of each detail (a dead letter's reason) seen in the window.
    typealias Flush = @Sendable (String, [String: Int]) -> Void

    private let window: Duration
    private let counts = Locked<[String: [String: Int]]>([:])
    private let handler = Locked<Flush?>(nil)
    private let timer = RepeatingTimer()
    private let queue = DispatchQueue(label: "storerelay.operational-batches")

    init(window: Duration) { self.window = window }

    /// What each window's counts go to; set once, before the first `add`.
    var onFlush: Flush? {
        get { handler.current }
        set { handler.withLock { $0 = newValue } }
    }

    func add(_ key: String, detail: String) {
        counts.withLock { $0[key, default: [:]][detail, default: 0] += 1 }
    }

    /// Starts or stops the window's timer; stopping drops nothing already counted until the
    /// next start.
    func setRunning(_ running: Bool) {
        guard running else { return timer.stop() }
        timer.start(after: window, every: window, leeway: .milliseconds(100), on: queue) { [weak self] in self?.flush() }
    }

    /// Hands on and clears every key counted since the last flush.
    func flush() {
        let taken = counts.withLock { counts in
            defer { counts.removeAll() }
            return counts
        }
        guard let handler = handler.current else { return }
        for (key, details) in taken.sorted(by: { $0.key < $1.key }) {
            handler(key, details)
        }
    }
}
