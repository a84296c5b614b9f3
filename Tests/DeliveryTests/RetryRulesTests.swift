import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

@Suite struct RetryScheduleTests {
    @Test func delaysGrowExponentiallyWithinTheBounds() {
        let schedule = RetrySchedule(initial: .seconds(1), maximum: .seconds(60))
        var random = SystemRandomNumberGenerator()
        for failures in 1...30 {
            for _ in 0..<50 {
                let ms = schedule.delay(afterFailures: failures, random: &random).wholeMilliseconds
                let ceiling = min(60_000, 1000 << min(failures - 1, 20))
                #expect(ms >= 1000 && ms <= 60_000)
                #expect(ms >= ceiling / 2 && ms <= ceiling, "failure \(failures): \(ms) ms")
            }
        }
    }

    @Test func jitterSpreadsRetries() {
        let schedule = RetrySchedule(initial: .seconds(1), maximum: .seconds(3600))
        let delays = Set((0..<100).map { _ in schedule.delay(afterFailures: 8).wholeMilliseconds })
        #expect(delays.count > 50)
    }

    @Test func hugeFailureCountsDoNotOverflow() {
        let schedule = RetrySchedule(initial: .milliseconds(50), maximum: .milliseconds(200))
        #expect(schedule.delay(afterFailures: Int.max).wholeMilliseconds <= 200)
        #expect(schedule.delay(afterFailures: 0).wholeMilliseconds >= 50)
    }

    @Test func retryAfterInSecondsAndAsAnHTTPDate() {
        let now = Timestamp(seconds: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(RetryAfter.parse("120", now: now) == .seconds(120))
        #expect(RetryAfter.parse(" 7 ", now: now) == .seconds(7))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:50:37 GMT", now: now) == .milliseconds(60_000))
        #expect(RetryAfter.parse("Sunday, 06-Nov-94 08:50:37 GMT", now: now) == .milliseconds(60_000))
        #expect(RetryAfter.parse("Sun Nov  6 08:50:37 1994", now: now) == .milliseconds(60_000))
        #expect(RetryAfter.parse("Sun, 06 Nov 1994 08:00:00 GMT", now: now) == .zero)
        for garbage in [nil, "", "soon", "-5", "1.5", "Sun, 31 Feb 1994 08:50:37 GMT", "Sun, 06 Foo 1994 08:50:37 GMT"] {
            #expect(RetryAfter.parse(garbage, now: now) == nil, "\(String(describing: garbage))")
        }
    }

    @Test func timestampsRoundTripThroughISO8601() {
        for ms: Int64 in [0, 1, 999, 1_646_387_008_254, 4_102_444_799_999, -1] {
            let stamp = Timestamp(milliseconds: ms)
            #expect(Timestamp(iso8601: stamp.iso8601) == stamp, "\(stamp.iso8601)")
        }
        #expect(Timestamp(iso8601: "2026-11-20T10:15:30Z")?.milliseconds == 1_795_169_730_000)
        for bad in ["2026-11-20", "2026-13-01T00:00:00Z", "2026-11-20T10:15:30+01:00", "2026-11-20T10:15:30.12Z", "x"] {
            #expect(Timestamp(iso8601: bad) == nil, "\(bad)")
        }
    }
}

@Suite struct CircuitBreakerTests {
    let now = Timestamp(milliseconds: 1_000_000)

    @Test func opensAfterConsecutiveFailuresThenProbesOnce() {
        var breaker = CircuitBreaker(threshold: 3, cooldown: RetrySchedule(initial: .seconds(10), maximum: .seconds(10)))
        for _ in 0..<2 {
            let allowed1 = breaker.allowsAttempt(at: now)
            #expect(allowed1)
            breaker.recordFailure(at: now)
        }
        #expect(breaker.state == .closed)
        breaker.recordFailure(at: now)
        #expect(breaker.state == .open)
        let allowed2 = breaker.allowsAttempt(at: now)
        #expect(!allowed2)
        let allowed3 = breaker.allowsAttempt(at: Timestamp(milliseconds: now.milliseconds + 9_999))
        #expect(!allowed3)
        let later = Timestamp(milliseconds: now.milliseconds + 10_000)
        let allowed4 = breaker.allowsAttempt(at: later)
        #expect(allowed4)
        #expect(breaker.state == .halfOpen)
        let allowed5 = breaker.allowsAttempt(at: later)
        #expect(!allowed5, "only one probe")
        breaker.recordFailure(at: later)
        #expect(breaker.state == .open)
        let muchLater = Timestamp(milliseconds: later.milliseconds + 10_000)
        let allowed6 = breaker.allowsAttempt(at: muchLater)
        #expect(allowed6)
        breaker.recordSuccess()
        #expect(breaker.state == .closed && breaker.consecutiveFailures == 0)
        let allowed7 = breaker.allowsAttempt(at: muchLater)
        let allowed8 = breaker.allowsAttempt(at: muchLater)
        #expect(allowed7 && allowed8)
    }

    @Test func anAnswerResetsTheFailureCount() {
        var breaker = CircuitBreaker(threshold: 2, cooldown: RetrySchedule(initial: .seconds(1), maximum: .seconds(1)))
        breaker.recordFailure(at: now)
        breaker.recordAnswer()
        breaker.recordFailure(at: now)
        #expect(breaker.state == .closed)
    }
}

@Suite struct WebhookClassificationTests {
    let now = Timestamp(milliseconds: 1_000_000)
    let kind: WebhookKind

    init() throws {
        let url = try HTTPURL("http://127.0.0.1:1/hook")
        kind = WebhookKind(request: WebhookRequest(options: WebhookOptions(url: url)), client: HTTPClient())
    }

    private func classify(_ status: Int, headers: HTTPHeaders = [:]) -> AttemptOutcome {
        kind.classify(.success(HTTPClientResponse(status: status, reason: "", headers: headers, body: Array("nope\nmore".utf8))),
                      started: now, durationMs: 3, now: now)
    }

    @Test(arguments: [200, 201, 202, 204, 299])
    func twoHundredsAreDelivered(_ status: Int) {
        guard case .delivered(let attempt) = classify(status) else { Issue.record("\(status)"); return }
        #expect(attempt.status == status && attempt.error == nil)
    }

    @Test(arguments: [408, 425, 429, 500, 502, 503, 504, 599])
    func transientStatusesAreRetried(_ status: Int) {
        guard case .retry(let attempt, nil) = classify(status) else { Issue.record("\(status)"); return }
        #expect(attempt.status == status)
        #expect(attempt.error == "HTTP \(status): nope more")
    }

    @Test(arguments: [100, 301, 304, 400, 401, 403, 404, 409, 410, 413, 422])
    func otherStatusesAreRejected(_ status: Int) {
        guard case .reject(let attempt) = classify(status) else { Issue.record("\(status)"); return }
        #expect(attempt.status == status)
    }

    @Test func retryAfterIsPassedOn() {
        guard case .retry(_, let after) = classify(429, headers: ["Retry-After": "3"]) else { Issue.record("no retry"); return }
        #expect(after == .seconds(3))
    }

    @Test func transportErrorsAreRetried() {
        for code in [HTTPClientError.Code.connect, .connectTimeout, .timeout, .tls, .io, .protocol, .resolution] {
            let outcome = kind.classify(.failure(HTTPClientError(code, "boom")), started: now, durationMs: 1, now: now)
            guard case .retry(let attempt, nil) = outcome else { Issue.record("\(code)"); continue }
            #expect(attempt.status == nil && attempt.error?.hasPrefix("\(code)") == true)
        }
    }
}
