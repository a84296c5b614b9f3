import Dispatch
import Testing
import StoreRelayCore

/// `Recheck` calls back once the condition holds, or with false at the deadline, and never
/// on the caller's thread: the caller goes on at once.
@Suite struct RecheckTests {
    private static func wait(_ done: DispatchSemaphore) -> Bool { done.wait(timeout: .now() + 10) == .success }

    @Test func callsBackOnceTheConditionHolds() {
        let flag = Locked(false)
        let outcome = Locked<[Bool]>([])
        let done = DispatchSemaphore(value: 0)
        let queue = DispatchQueue(label: "test.recheck")
        Recheck.until(ContinuousClock.now + .seconds(10), on: queue, { flag.current }) { held in
            outcome.withLock { $0.append(held) }
            done.signal()
        }
        #expect(outcome.current.isEmpty, "nothing called back before the condition held")
        queue.asyncAfter(deadline: .now() + .milliseconds(50)) { flag.withLock { $0 = true } }
        #expect(Self.wait(done))
        #expect(outcome.current == [true])
    }

    @Test func givesUpAtTheDeadline() {
        let outcome = Locked<[Bool]>([])
        let done = DispatchSemaphore(value: 0)
        let started = ContinuousClock.now
        Recheck.until(started + .milliseconds(100), on: DispatchQueue(label: "test.recheck"), { false }) { held in
            outcome.withLock { $0.append(held) }
            done.signal()
        }
        #expect(Self.wait(done))
        #expect(outcome.current == [false])
        #expect(ContinuousClock.now - started >= .milliseconds(100))
    }
}
