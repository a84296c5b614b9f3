import Dispatch
import StoreRelayCore

/// The command line's one blocking wait. A one-shot command (`dlq`, `reconcile`, `probe`,
/// `simulate --url`) has nothing else to do while its single answer is on the way, so its
/// main thread waits here, and only here, for a completion-style call that does the I/O on
/// the library's own queues. Never call it on one of those queues: it would wait on itself.
enum Blocking {
    /// What `start` passes to its completion, once it does.
    static func wait<Answer: Sendable>(for start: (@escaping @Sendable (Answer) -> Void) -> Void) -> Answer {
        let answer = Locked<Answer?>(nil)
        let done = DispatchSemaphore(value: 0)
        start { value in
            answer.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        // Set before the signal that ended the wait.
        return answer.current!
    }
}
