import Testing
@testable import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// A pause in the runner's state (SPEC "Delivery controls"): no attempt starts while paused,
/// and nothing is dead-lettered for having waited out a pause longer than `max-age`.
@Suite struct PauseStateTests {
    let clock = ManualClock()

    private func state(maxAge: Duration = .seconds(60)) -> AttemptRunner.State {
        AttemptRunner.State(limits: DeliveryLimits(maxAttempts: 5, maxAge: maxAge,
                                                   schedule: RetrySchedule(initial: .seconds(1), maximum: .seconds(1))),
                            concurrency: 4)
    }

    private func job(acceptedAt: Timestamp, attemptsAt: [Timestamp] = []) throws -> DeliveryJob {
        try DeliveryJob(notification: sampleNotification(), destination: "d", body: [],
                        attempts: attemptsAt.map { DeliveryAttempt(at: $0, status: 503, error: "HTTP 503", durationMs: 1) },
                        due: acceptedAt, attemptsBeforeBudget: 0, budgetStart: acceptedAt)
    }

    @Test func pausedNoAttemptStartsAndResumingLetsThemAgain() {
        var rules = state()
        let now = clock.now()
        let paused = rules.setPaused(true, at: now)
        let again = rules.setPaused(true, at: now)
        #expect(paused && !again, "a second pause changes nothing")
        let whilePaused = rules.allowsAttempt(at: now)
        #expect(!whilePaused && rules.paused)
        #expect(rules.status(name: "d", kind: "webhook", queueDepth: 0, parked: 0).paused)
        let changed = rules.setPaused(false, at: now)
        #expect(changed)
        let resumed = rules.allowsAttempt(at: now)
        #expect(resumed && rules.resumedAt == now)
        #expect(!rules.status(name: "d", kind: "webhook", queueDepth: 0, parked: 0).paused)
    }

    @Test func anEventWhoseMaxAgePassedWhilePausedGetsOneAttemptAfterTheResume() throws {
        var rules = state(maxAge: .seconds(60))
        let accepted = clock.now()
        let earlier = try job(acceptedAt: accepted, attemptsAt: [accepted])
        let never = try job(acceptedAt: accepted)
        _ = rules.setPaused(true, at: accepted)
        clock.advance(by: .seconds(3600))
        let resumedAt = clock.now()
        _ = rules.setPaused(false, at: resumedAt)
        #expect(rules.expired(earlier, now: resumedAt) == nil, "attempted before the pause only: one more try")
        #expect(rules.expired(never, now: resumedAt) == nil, "never attempted: one try")
        // That attempt failed after the resume: now max-age applies as it always does.
        let tried = try job(acceptedAt: accepted, attemptsAt: [accepted, resumedAt])
        guard case .deadLetter(_, .exhausted, let detail)? = rules.expired(tried, now: resumedAt.advanced(by: .seconds(1))) else {
            Issue.record("an event tried after the resume is held to max-age")
            return
        }
        #expect(detail.contains("max-age"))
        // An event accepted after the resume is held to max-age as always.
        let later = try job(acceptedAt: resumedAt.advanced(by: .seconds(1)))
        #expect(rules.expired(later, now: resumedAt.advanced(by: .seconds(120))) != nil)
        // Without a pause, max-age dead-letters as before.
        #expect(state().expired(never, now: resumedAt) != nil)
    }
}
