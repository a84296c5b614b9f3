import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayCore
import StoreRelayTestSupport

/// `rate N/s` as a token bucket on a manual clock: the pace, the burst, the debt of attempts
/// started unpaced, and the runner's state asking it before the breaker.
@Suite struct TokenBucketTests {
    let clock = ManualClock()

    /// Starts an attempt whenever the bucket allows, every millisecond for `seconds`, and
    /// returns the start times.
    private func drive(_ rate: DeliveryRate, seconds: Int) -> [Int64] {
        var bucket = TokenBucket(rate)
        var starts: [Int64] = []
        for _ in 0..<(seconds * 1000) {
            let now = clock.now()
            for _ in 0..<bucket.available(at: now) {
                bucket.spend(1, at: now)
                starts.append(now.milliseconds)
            }
            clock.advance(by: .milliseconds(1))
        }
        return starts
    }

    /// The most starts in any window of `width` milliseconds.
    private func busiestWindow(_ starts: [Int64], width: Int64) -> Int {
        starts.indices.map { i in starts[i...].prefix { $0 < starts[i] + width }.count }.max() ?? 0
    }

    @Test func tenPerSecondStartsTenASecondAndNoWindowHoldsMoreThanTheBurstBeyond() {
        let rate = DeliveryRate(count: 10, period: .seconds(1))
        #expect(rate.burst == 1)
        let starts = drive(rate, seconds: 10)
        #expect(starts.count >= 100 && starts.count <= 101, "\(starts.count)")
        #expect(busiestWindow(starts, width: 1000) <= 10 + rate.burst)
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $1 - $0 >= 100 }, "paced a tenth of a second apart")
    }

    @Test func aHighRateBurstsATenthOfASecondsWorth() {
        let rate = DeliveryRate(count: 50, period: .seconds(1))
        #expect(rate.burst == 5)
        let starts = drive(rate, seconds: 4)
        #expect(starts.prefix(5).allSatisfy { $0 == starts[0] }, "a full bucket lets the burst go at once")
        #expect(busiestWindow(starts, width: 1000) <= 50 + 5)
        #expect(starts.count >= 200 && starts.count <= 205, "\(starts.count)")
    }

    @Test func perMinuteSpacesAttemptsBySeconds() {
        let rate = DeliveryRate(count: 30, period: .seconds(60))
        #expect(rate.burst == 1 && rate.perSecond == 0.5)
        var bucket = TokenBucket(rate)
        let start = clock.now()
        #expect(bucket.available(at: start) == 1 && bucket.nextToken(at: start) == nil)
        bucket.spend(1, at: start)
        #expect(bucket.available(at: start) == 0)
        #expect(bucket.nextToken(at: start) == start.advanced(by: .seconds(2)))
        #expect(bucket.available(at: start.advanced(by: .milliseconds(1999))) == 0)
        #expect(bucket.available(at: start.advanced(by: .seconds(2))) == 1)
    }

    @Test func idleTimeFillsNoMoreThanTheBurst() {
        var bucket = TokenBucket(DeliveryRate(count: 100, period: .seconds(1)))
        let start = clock.now()
        bucket.spend(10, at: start)
        #expect(bucket.available(at: start) == 0)
        #expect(bucket.available(at: start.advanced(by: .seconds(3600))) == 10)
    }

    /// Attempts started unpaced (claimed cluster entries) leave a debt the next ones wait out.
    @Test func spendingBeyondTheTokensDelaysTheNextByTheDebt() {
        var bucket = TokenBucket(DeliveryRate(count: 10, period: .seconds(1)))
        let start = clock.now()
        bucket.spend(4, at: start)  // 1 token there, 3 owed
        #expect(bucket.nextToken(at: start) == start.advanced(by: .milliseconds(400)))
        #expect(bucket.available(at: start.advanced(by: .milliseconds(399))) == 0)
        #expect(bucket.available(at: start.advanced(by: .milliseconds(400))) == 1)
    }

    @Test func aClockThatGoesBackRefillsNothing() {
        var bucket = TokenBucket(DeliveryRate(count: 10, period: .seconds(1)))
        let start = clock.now()
        bucket.spend(1, at: start)
        #expect(bucket.available(at: start.advanced(by: .seconds(-5))) == 0)
        bucket.spend(1, at: start.advanced(by: .seconds(-5)))
        #expect(bucket.available(at: start.advanced(by: .milliseconds(100))) == 0)
        #expect(bucket.available(at: start.advanced(by: .milliseconds(200))) == 1)
    }

    /// The runner's state: `take` spends (every attempt, retries included, takes a slot), and
    /// `allowsAttempt` asks the rate before the breaker, so a half-open breaker's probe is not
    /// used up by an attempt the rate then holds back.
    @Test func theRunnerStateSpendsATokenPerAttemptAndAsksTheRateFirst() throws {
        let limits = DeliveryLimits(maxAttempts: 5, maxAge: .seconds(3600),
                                    schedule: RetrySchedule(initial: .seconds(1), maximum: .seconds(1)),
                                    rate: DeliveryRate(count: 10, period: .seconds(1)))
        var state = AttemptRunner.State(limits: limits, concurrency: 8)
        let now = clock.now()
        #expect(state.rateRoom(at: now) == 1)
        let first = state.allowsAttempt(at: now)
        #expect(first)
        state.take(at: now)
        #expect(state.room == 7 && state.rateRoom(at: now) == 0)
        let spent = state.allowsAttempt(at: now)
        #expect(!spent)
        #expect(state.nextToken(at: now) == now.advanced(by: .milliseconds(100)))
        state.release()
        let early = state.allowsAttempt(at: now.advanced(by: .milliseconds(50)))
        #expect(!early, "a slot freed is not a token")
        let refilled = state.allowsAttempt(at: now.advanced(by: .milliseconds(100)))
        #expect(refilled)

        // Five failures open the breaker; when its probe may go, the rate still decides first.
        var later = now.advanced(by: .seconds(1))
        for _ in 0..<5 {
            state.take(at: later)
            let job = try DeliveryJob(notification: sampleNotification(), destination: "d", body: [], attempts: [], due: later,
                                      attemptsBeforeBudget: 0, budgetStart: later)
            _ = state.settle(job, .retry(DeliveryAttempt(at: later, status: 503, error: "HTTP 503", durationMs: 1), retryAfter: nil), now: later)
            state.release()
            later = later.advanced(by: .seconds(1))
        }
        let reopens = try #require(state.breaker.openUntil)
        state.take(at: reopens)  // an attempt the breaker did not pace (a claimed entry) spends the token
        state.release()
        let heldByRate = state.allowsAttempt(at: reopens)
        let probe = state.allowsAttempt(at: reopens.advanced(by: .milliseconds(100)))
        #expect(!heldByRate && probe, "the probe is still there once the rate allows it")

        let unlimited = AttemptRunner.State(limits: DeliveryLimits(maxAttempts: 5, maxAge: .seconds(3600),
                                                                   schedule: RetrySchedule(initial: .seconds(1), maximum: .seconds(1))),
                                            concurrency: 8)
        #expect(unlimited.rateRoom(at: now) == .max && unlimited.nextToken(at: now) == nil)
    }
}
