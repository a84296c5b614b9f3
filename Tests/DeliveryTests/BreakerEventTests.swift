import Dispatch
import Testing
@testable import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// A kind whose answer the test changes: the destination going down and coming back.
private struct SwitchableKind: DestinationKind {
    static let name = "switchable"
    let answer = Locked(503)

    var concurrency: Int { 1 }
    func prepare(_ notification: StoredNotification) -> [UInt8] { [] }
    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Int) -> Void) {
        answer(self.answer.current)
    }
    func classify(_ answer: Int, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        let attempt = DeliveryAttempt(at: started, status: answer, error: "HTTP \(answer)", durationMs: durationMs)
        return answer == 200 ? .delivered(attempt) : .retry(attempt, retryAfter: nil)
    }
    func close(completion: @escaping @Sendable () -> Void) { completion() }
}

/// Records what `breakerChanged` is told.
private final class BreakerObserver: DeliveryObserver {
    let changes = Locked<[(open: Bool, error: String?)]>([])
    func attemptFinished(destination: String, outcome: String, seconds: Double) {}
    func deadLettered(destination: String?, reason: DeadLetter.Reason) {}
    func breakerChanged(destination: String, open: Bool, error: String?) {
        changes.withLock { $0.append((open, error)) }
    }
}

/// What `destination.breaker_opened` and `breaker_closed` are raised from: the runner tells
/// its observer when the breaker opens after failures, not again while failed probes keep it
/// open, and once when it closes.
@Suite struct BreakerEventTests {
    @Test func openedOnceClosedOnce() throws {
        let kind = SwitchableKind()
        let observer = BreakerObserver()
        let clock = ManualClock()
        let queue = DispatchQueue(label: "test.breaker")
        let runner = AttemptRunner(
            destination: "billing",
            setup: DestinationSetup(kind: kind, limits: DeliveryLimits(
                maxAttempts: 100, maxAge: .seconds(86_400), schedule: RetrySchedule(initial: .seconds(1), maximum: .seconds(1)))),
            queue: queue, clock: clock, observer: observer, logger: .disabled)
        let job = DeliveryJob(notification: try sampleNotification(), destination: "billing", body: [], attempts: [],
                              due: clock.now(), budgetStart: clock.now())

        /// One attempt when the breaker allows it; whether it did.
        func attempt() -> Bool {
            let done = DispatchSemaphore(value: 0)
            let allowed = queue.sync { runner.allowsAttempt(at: clock.now()) }
            guard allowed else { return false }
            queue.async {
                runner.attempt(job) { outcome in
                    _ = runner.settle(job, outcome)
                    done.signal()
                }
            }
            _ = done.wait(timeout: .now() + 5)
            return true
        }

        for _ in 0..<5 { #expect(attempt()) }
        #expect(observer.changes.current.map(\.open) == [true])
        #expect(observer.changes.current.first?.error == "HTTP 503")
        #expect(!attempt(), "open: no attempt until the cooldown ends")
        clock.advance(by: .seconds(2))
        #expect(attempt(), "the probe")
        #expect(observer.changes.current.map(\.open) == [true], "a failed probe keeps it open, and is not told again")
        kind.answer.withLock { $0 = 200 }
        clock.advance(by: .seconds(5))
        #expect(attempt())
        #expect(observer.changes.current.map(\.open) == [true, false])
        #expect(attempt())
        #expect(observer.changes.current.count == 2, "a success while closed changes nothing")
    }
}
