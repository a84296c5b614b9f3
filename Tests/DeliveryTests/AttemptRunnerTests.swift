import Dispatch
import Testing
@testable import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// The rules every destination settles an attempt by, in either mode, without I/O.
@Suite struct AttemptRulesTests {
    let now = Timestamp(milliseconds: 1_800_000_000_000)

    private func state(maxAttempts: Int = 12, maxAge: Duration = .seconds(3600), backoff: Duration = .seconds(1),
                       concurrency: Int = 4) -> AttemptRunner.State {
        AttemptRunner.State(limits: DeliveryLimits(maxAttempts: maxAttempts, maxAge: maxAge,
                                                   schedule: RetrySchedule(initial: backoff, maximum: backoff)),
                            concurrency: concurrency)
    }

    private func job(attempts: Int = 0, before: Int = 0, budgetStart: Timestamp? = nil) throws -> DeliveryJob {
        let failed = DeliveryAttempt(at: now, status: 503, error: "HTTP 503", durationMs: 1)
        return DeliveryJob(notification: try sampleNotification(), destination: "hook", body: [], attempts: Array(repeating: failed, count: attempts),
                           due: now, attemptsBeforeBudget: before, budgetStart: budgetStart ?? now)
    }

    private func attempt(_ status: Int?, _ error: String? = nil) -> DeliveryAttempt {
        DeliveryAttempt(at: now, status: status, error: error, durationMs: 5)
    }

    @Test func aDeliveryRecordsTheSuccessAndTheAttempt() throws {
        var rules = state()
        let (verdict, label) = rules.settle(try job(attempts: 2), .delivered(attempt(200)), now: now)
        guard case .delivered(let done) = verdict else { Issue.record("\(verdict)"); return }
        #expect(done.attempts.count == 3 && done.attempts.last?.status == 200)
        #expect(label == "delivered" && rules.lastSuccess == now && rules.lastError == nil)
        #expect(rules.status(name: "hook", kind: "webhook", queueDepth: 0, parked: 0).lastSuccess == now)
    }

    @Test func aRejectionIsDeadLetteredAndResetsTheBreaker() throws {
        var rules = state()
        for _ in 0..<4 { _ = rules.settle(try job(), .retry(attempt(503, "HTTP 503"), retryAfter: nil), now: now) }
        #expect(rules.breaker.consecutiveFailures == 4)
        let (verdict, label) = rules.settle(try job(), .reject(attempt(404, "HTTP 404 Not Found")), now: now)
        guard case .deadLetter(_, .rejected, let detail) = verdict else { Issue.record("\(verdict)"); return }
        #expect(detail == "the destination answered HTTP 404, which is not retried")
        #expect(label == "rejected" && rules.breaker.consecutiveFailures == 0)
        #expect(rules.lastError?.message == "HTTP 404 Not Found" && rules.lastError?.at == now)
    }

    @Test func anUnsendableEventSparesTheBreaker() throws {
        var rules = state()
        for _ in 0..<4 { _ = rules.settle(try job(), .retry(attempt(nil, "connect"), retryAfter: nil), now: now) }
        let why = "the event's id holds a control character"
        let (verdict, label) = rules.settle(try job(), .unsendable(attempt(nil, why)), now: now)
        guard case .deadLetter(_, .rejected, let detail) = verdict else { Issue.record("\(verdict)"); return }
        #expect(detail == why && label == "rejected")
        #expect(rules.breaker.consecutiveFailures == 4 && rules.breaker.state == .closed)
    }

    @Test func fiveFailuresInARowOpenTheBreaker() throws {
        var rules = state()
        for failure in 1...5 {
            let allowed = rules.allowsAttempt(at: now)
            #expect(allowed, "attempt \(failure)")
            _ = rules.settle(try job(), .retry(attempt(nil, "timeout"), retryAfter: nil), now: now)
        }
        #expect(rules.breaker.state == .open)
        let whileOpen = rules.allowsAttempt(at: now)
        let reopens = try #require(rules.breaker.openUntil)
        let probe = rules.allowsAttempt(at: reopens)
        let second = rules.allowsAttempt(at: reopens)
        #expect(!whileOpen && probe && !second, "one probe once the cooldown ends")
        rules.cancelProbe()
        let again = rules.allowsAttempt(at: reopens)
        #expect(again, "a cancelled probe may go out again")
    }

    @Test func aRetryWaitsForTheBackoffAndNoLessThanRetryAfter() throws {
        var rules = state(backoff: .seconds(2))
        let (soon, label) = rules.settle(try job(), .retry(attempt(503), retryAfter: .milliseconds(500)), now: now)
        guard case .retry(let again, let failed) = soon else { Issue.record("\(soon)"); return }
        #expect(label == "retry" && failed.status == 503)
        #expect(again.due == now.advanced(by: .seconds(2)) && again.attempts.count == 1)
        let (later, _) = rules.settle(try job(), .retry(attempt(429), retryAfter: .seconds(90)), now: now)
        guard case .retry(let waiting, _) = later else { Issue.record("\(later)"); return }
        #expect(waiting.due == now.advanced(by: .seconds(90)))
        #expect(rules.lastError?.message == "failed", "no error text: the outcome is named")
    }

    @Test func theAttemptBudgetCountsFromTheReplay() throws {
        var rules = state(maxAttempts: 3)
        // Two attempts before a replay's fresh budget: its second failure leaves one more.
        let (second, _) = rules.settle(try job(attempts: 3, before: 2), .retry(attempt(500), retryAfter: nil), now: now)
        guard case .retry = second else { Issue.record("\(second)"); return }
        let (spent, label) = rules.settle(try job(attempts: 4, before: 2), .retry(attempt(500), retryAfter: nil), now: now)
        guard case .deadLetter(let letter, .exhausted, let detail) = spent else { Issue.record("\(spent)"); return }
        #expect(label == "exhausted" && letter.attempts.count == 5)
        #expect(detail == "gave up after 3 attempts (max-attempts 3)")
    }

    @Test func aRetryThatMaxAgeWouldOvertakeIsExhausted() throws {
        var rules = state(maxAge: .seconds(10), backoff: .milliseconds(500))
        let started = now.advanced(by: .seconds(-9))
        let (fits, _) = rules.settle(try job(budgetStart: started), .retry(attempt(503), retryAfter: .milliseconds(900)), now: now)
        guard case .retry = fits else { Issue.record("\(fits)"); return }
        let (late, label) = rules.settle(try job(budgetStart: started), .retry(attempt(503), retryAfter: .seconds(1)), now: now)
        guard case .deadLetter(_, .exhausted, let detail) = late else { Issue.record("\(late)"); return }
        #expect(label == "exhausted" && detail == "max-age 10s would pass before the next attempt")
    }

    @Test func aJobPastMaxAgeIsNotAttempted() throws {
        let rules = state(maxAge: .seconds(10))
        #expect(rules.expired(try job(budgetStart: now.advanced(by: .seconds(-9))), now: now) == nil)
        let verdict = rules.expired(try job(budgetStart: now.advanced(by: .seconds(-10))), now: now)
        guard case .deadLetter(let letter, .exhausted, let detail)? = verdict else { Issue.record("\(String(describing: verdict))"); return }
        #expect(detail == "max-age 10s passed before the event could be delivered")
        #expect(letter.attempts.isEmpty && letter.due == now)
    }

    @Test func slotsBoundTheJobsInFlight() {
        var rules = state(concurrency: 2)
        rules.take(at: now)
        #expect(rules.room == 1)
        rules.take(at: now)
        #expect(rules.room == 0 && rules.status(name: "hook", kind: "file", queueDepth: 3, parked: 1).inFlight == 2)
        rules.release(2)
        rules.release()
        #expect(rules.room == 2, "never below none")
    }
}

/// A kind that answers at once with the status it is given: the runner without a socket.
private struct ScriptedKind: DestinationKind {
    static let name = "scripted"
    let answer: Int
    let refuse: String?
    let sent = Locked<[Int]>([])

    var concurrency: Int { 3 }
    func prepare(_ notification: StoredNotification) -> [UInt8] { Array(notification.id.utf8) }
    func unsendable(_ notification: StoredNotification) -> String? { refuse }
    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Int) -> Void) {
        sent.withLock { $0.append(attempt) }
        answer(self.answer)
    }
    func classify(_ answer: Int, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        let attempt = DeliveryAttempt(at: started, status: answer, durationMs: durationMs)
        return answer == 200 ? .delivered(attempt) : .retry(attempt, retryAfter: nil)
    }
    func close(completion: @escaping @Sendable () -> Void) { completion() }
}

@Suite struct AttemptRunnerTests {
    let log = MemorySink()

    private func runner(_ kind: ScriptedKind, observer: RecordingObserver, clock: ManualClock) -> (AttemptRunner, DispatchQueue) {
        let queue = DispatchQueue(label: "test.runner")
        let setup = DestinationSetup(kind: kind, limits: DeliveryLimits(
            maxAttempts: 5, maxAge: .seconds(3600), schedule: RetrySchedule(initial: .seconds(1), maximum: .seconds(1))))
        return (AttemptRunner(destination: "bus", setup: setup, queue: queue, clock: clock, observer: observer,
                              logger: Logger(label: "test", level: .info, sink: log)), queue)
    }

    /// Runs one attempt and settles it on the runner's queue, as an owner does.
    private func attemptAndSettle(_ runner: AttemptRunner, on queue: DispatchQueue, _ job: DeliveryJob) -> AttemptVerdict? {
        let verdict = Locked<AttemptVerdict?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.async {
            runner.attempt(job) { outcome in
                dispatchPrecondition(condition: .onQueue(queue))
                verdict.withLock { $0 = runner.settle(job, outcome) }
                done.signal()
            }
        }
        _ = done.wait(timeout: .now() + 5)
        return verdict.current
    }

    @Test func anAttemptIsNumberedSentClassifiedAndCounted() throws {
        let kind = ScriptedKind(answer: 503, refuse: nil)
        let observer = RecordingObserver()
        let clock = ManualClock()
        let (runner, queue) = runner(kind, observer: observer, clock: clock)
        let first = DeliveryJob(notification: try sampleNotification(), destination: "bus", body: [], attempts: [], due: clock.now(),
                                budgetStart: clock.now())
        guard case .retry(let again, _)? = attemptAndSettle(runner, on: queue, first) else { Issue.record("no retry"); return }
        #expect(again.due == clock.now().advanced(by: .seconds(1)))
        _ = attemptAndSettle(runner, on: queue, again)
        #expect(kind.sent.current == [1, 2])
        #expect(observer.outcomes.current == ["retry": 2])
        #expect(log.lines.filter { $0.contains("delivery attempt failed") }.count == 2, "each retry is logged once")
        let status = queue.sync { runner.status(queueDepth: 0, parked: 0) }
        #expect(status.kind == "scripted" && status.name == "bus" && status.lastError == "failed" && runner.concurrency == 3)
        #expect(runner.prepare(first.notification) == Array(first.notification.id.utf8))
    }

    @Test func anUnsendableEventIsNeverSent() throws {
        let kind = ScriptedKind(answer: 200, refuse: "no header can carry it")
        let observer = RecordingObserver()
        let clock = ManualClock()
        let (runner, queue) = runner(kind, observer: observer, clock: clock)
        let job = DeliveryJob(notification: try sampleNotification(), destination: "bus", body: [], attempts: [], due: clock.now(),
                              budgetStart: clock.now())
        guard case .deadLetter(let letter, .rejected, let detail)? = attemptAndSettle(runner, on: queue, job) else {
            Issue.record("not rejected"); return
        }
        #expect(detail == "no header can carry it" && letter.attempts.count == 1 && letter.attempts[0].durationMs == 0)
        #expect(kind.sent.current.isEmpty && observer.outcomes.current == ["rejected": 1])
        #expect(queue.sync { runner.breaker } == .closed)
    }
}
