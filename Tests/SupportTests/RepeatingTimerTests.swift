import Dispatch
import StoreRelayCore
import Testing

/// The one repeating timer: it repeats, it stops for good (from outside or from its own
/// handler), a start replaces the schedule, and a timer let go stops with it. Intervals are
/// short; waits for a tick are generous, and "no tick" is checked over many intervals.
@Suite struct RepeatingTimerTests {
    let queue = DispatchQueue(label: "test.repeating-timer")

    /// Counts ticks and signals each.
    final class Ticks: Sendable {
        let count = Locked(0)
        let signal = DispatchSemaphore(value: 0)

        func tick() {
            count.withLock { $0 += 1 }
            signal.signal()
        }

        /// Whether `n` more ticks come within ten seconds.
        func wait(for n: Int) -> Bool {
            (0..<n).allSatisfy { _ in signal.wait(timeout: .now() + .seconds(10)) == .success }
        }
    }

    /// Waits for anything already queued on `queue` (a tick under way) to finish.
    func drain() { queue.sync {} }

    func pause(_ milliseconds: Int) { _ = DispatchSemaphore(value: 0).wait(timeout: .now() + .milliseconds(milliseconds)) }

    @Test func repeatsUntilStopped() {
        let timer = RepeatingTimer()
        let ticks = Ticks()
        timer.start(every: .milliseconds(5), on: queue) { ticks.tick() }
        #expect(ticks.wait(for: 3))
        timer.stop()
        drain()
        let stoppedAt = ticks.count.current
        pause(100)
        #expect(ticks.count.current == stoppedAt)
    }

    @Test func stopsFromItsOwnHandler() {
        let timer = RepeatingTimer()
        let ticks = Ticks()
        timer.start(every: .milliseconds(5), on: queue) { [weak timer] in
            ticks.tick()
            timer?.stop()
        }
        #expect(ticks.wait(for: 1))
        pause(100)
        drain()
        #expect(ticks.count.current == 1)
        // Stopping again, from outside, changes nothing.
        timer.stop()
        timer.stop()
    }

    @Test func stopBeforeStartIsHarmless() {
        let timer = RepeatingTimer()
        timer.stop()
        let ticks = Ticks()
        timer.start(every: .milliseconds(5), on: queue) { ticks.tick() }
        #expect(ticks.wait(for: 2))
        timer.stop()
    }

    @Test func waitsForTheFirstDelay() {
        let timer = RepeatingTimer()
        let ticks = Ticks()
        timer.start(after: .seconds(60), every: .milliseconds(5), on: queue) { ticks.tick() }
        pause(100)
        drain()
        #expect(ticks.count.current == 0)
        timer.stop()
    }

    @Test func startingAgainReplacesTheSchedule() {
        let timer = RepeatingTimer()
        let first = Ticks()
        let second = Ticks()
        timer.start(every: .milliseconds(5), on: queue) { first.tick() }
        #expect(first.wait(for: 1))
        timer.start(every: .milliseconds(5), on: queue) { second.tick() }
        drain()
        let firstCount = first.count.current
        #expect(second.wait(for: 3))
        #expect(first.count.current == firstCount)
        timer.stop()
    }

    @Test func aTimerLetGoStops() {
        let ticks = Ticks()
        var timer: RepeatingTimer? = RepeatingTimer()
        timer?.start(every: .milliseconds(5), on: queue) { ticks.tick() }
        #expect(ticks.wait(for: 1))
        timer = nil
        drain()
        let released = ticks.count.current
        pause(100)
        #expect(ticks.count.current == released)
    }
}
