import Foundation
import Testing
import StoreRelayCore

/// The retry timers both API clients wait on: a pause resumes once, `cancel()` resumes every
/// waiting one with `false` at once, and a pause after it never waits.
@Suite struct RetryWaitsTests {
    @Test func aPauseResumesOnceAndCancelEndsTheOthersAtOnce() {
        let waits = RetryWaits(label: "test.retry-waits")
        let results = Locked<[String: Bool]>([:])
        let done = DispatchGroup()
        for (name, delay) in [("short", Duration.milliseconds(10)), ("long", .seconds(600)), ("longer", .seconds(900))] {
            done.enter()
            waits.pause(delay) { resumed in
                results.withLock { #expect($0.updateValue(resumed, forKey: name) == nil, "resumed twice") }
                done.leave()
            }
        }
        // Only the short one can fire on its own; the others wait for minutes.
        for _ in 0..<200 where results.current["short"] == nil { Thread.sleep(forTimeInterval: 0.005) }
        #expect(results.current == ["short": true])
        #expect(!waits.isCancelled)
        waits.cancel()
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(results.current == ["short": true, "long": false, "longer": false])
        #expect(waits.isCancelled)
        let after = Locked<Bool?>(nil)
        waits.pause(.milliseconds(1)) { resumed in after.withLock { $0 = resumed } }
        #expect(after.current == false, "a pause after cancel() resumes false at once, on the caller's thread")
    }

    @Test func backoffDoublesWithJitterWithinItsBounds() {
        var random = SystemRandomNumberGenerator()
        for failures in 1...30 {
            let ceiling = min(60_000, 1_000 << min(failures - 1, 20))
            for _ in 0..<50 {
                let wait = RetryWaits.backoff(afterFailures: failures, first: .seconds(1), maximum: .seconds(60), random: &random)
                #expect((Int64(ceiling)...60_000).contains(wait.wholeMilliseconds) || wait.wholeMilliseconds == 60_000)
                #expect(wait.wholeMilliseconds <= min(60_000, ceiling + ceiling / 2))
            }
        }
        // Zero or negative failures are treated as the first.
        #expect(RetryWaits.backoff(afterFailures: 0, first: .seconds(1), maximum: .seconds(1), random: &random) == .seconds(1))
    }
}
