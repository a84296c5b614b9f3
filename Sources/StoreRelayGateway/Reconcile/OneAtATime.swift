import Dispatch
import StoreRelayCore

/// Runs asynchronous work one piece at a time, in the order given: a piece holds the line
/// until it calls its `done`, however many queues its callbacks cross meanwhile. So a
/// reconciliation pass can wait minutes for Apple without holding a thread, and two passes
/// of one app still never overlap.
final class OneAtATime: Sendable {
    typealias Work = @Sendable (_ done: @escaping @Sendable () -> Void) -> Void

    private struct State {
        var running = false
        var waiting: [Work] = []
    }
    private let state = Locked(State())
    /// Where each piece starts.
    private let queue: DispatchQueue

    init(queue: DispatchQueue) {
        self.queue = queue
    }

    /// Starts `work` now if nothing is running, else after everything given before it.
    func enqueue(_ work: @escaping Work) {
        let startNow = state.withLock { state -> Bool in
            guard !state.running else {
                state.waiting.append(work)
                return false
            }
            state.running = true
            return true
        }
        if startNow { start(work) }
    }

    private func start(_ work: @escaping Work) {
        queue.async { [self] in
            let finished = Locked(false)
            work { [self] in
                // A second call must not start a second piece beside the next one.
                let first = finished.withLock { finished -> Bool in
                    defer { finished = true }
                    return !finished
                }
                if first { startNext() }
            }
        }
    }

    private func startNext() {
        let next = state.withLock { state -> Work? in
            guard !state.waiting.isEmpty else {
                state.running = false
                return nil
            }
            return state.waiting.removeFirst()
        }
        if let next { start(next) }
    }
}
