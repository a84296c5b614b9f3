import Dispatch
import Testing
import StoreRelayAppStoreAPI
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// Retries as timers, not sleeping threads: against a loopback server on port 0 that answers
/// every request with a 503, one call asks again after its backoff, and `cancel()` ends a
/// call waiting to retry at once.
@Suite(.serialized, .timeLimit(.minutes(1))) struct AppStoreAPIRetryTests {
    /// Answers every request with 503 and counts them.
    final class Unavailable: Sendable {
        let server: HTTPServer
        let port: Int
        let requests = Locked(0)

        init() throws {
            let requests = requests
            server = HTTPServer(configuration: HTTPServerConfiguration(address: "127.0.0.1:0")) { _, responder in
                requests.withLock { $0 += 1 }
                responder.respond(HTTPResponse(status: 503, contentType: "application/json", body: #"{"errorCode":5000000}"#))
            }
            port = try server.start()
        }

        deinit { server.shutdown() }
    }

    func api(_ fake: Unavailable, http: HTTPClient, retries: AppStoreServerAPI.Retries) throws -> AppStoreServerAPI {
        let (credentials, _) = try AppStoreAPIUnitTests.credentials()
        return try AppStoreServerAPI(credentials: credentials, environment: .sandbox, baseURL: try HTTPURL.parse("http://127.0.0.1:\(fake.port)"),
                                     http: http, retries: retries)
    }

    /// Starts one history call; the answer lands in the returned box, `done` signalled.
    func history(_ api: AppStoreServerAPI, done: DispatchSemaphore) -> Locked<Result<NotificationHistoryPage, AppStoreAPIError>?> {
        let answer = Locked<Result<NotificationHistoryPage, AppStoreAPIError>?>(nil)
        api.notificationHistory(NotificationHistoryQuery(startDate: 0, endDate: 1), paginationToken: nil) { result in
            answer.withLock { $0 = result }
            done.signal()
        }
        return answer
    }

    @Test func aRetryableAnswerIsAskedAgainAfterTheBackoff() throws {
        let fake = try Unavailable()
        let http = HTTPClient()
        defer { http.shutdown() }
        var retries = AppStoreServerAPI.Retries()
        retries.attempts = 3
        retries.firstBackoff = .milliseconds(50)
        retries.maximumBackoff = .milliseconds(100)
        let done = DispatchSemaphore(value: 0)
        let answer = history(try api(fake, http: http, retries: retries), done: done)
        #expect(done.wait(timeout: .now() + 20) == .success)
        #expect(fake.requests.current == 3, "the first attempt and two retries")
        guard case .failure(let error)? = answer.current else {
            Issue.record("a server that answers 503 gave \(String(describing: answer.current))")
            return
        }
        #expect(error.kind == .api && error.status == 503)
    }

    @Test func cancelEndsAWaitForARetryAtOnce() throws {
        let fake = try Unavailable()
        let http = HTTPClient()
        defer { http.shutdown() }
        var retries = AppStoreServerAPI.Retries()
        // Far longer than the test may take: only cancel() can end this wait.
        retries.firstBackoff = .seconds(600)
        retries.maximumBackoff = .seconds(600)
        let api = try api(fake, http: http, retries: retries)
        let done = DispatchSemaphore(value: 0)
        let answer = history(api, done: done)
        #expect(pollUntil(timeout: 10) { fake.requests.current == 1 })
        // The 503 is in; the call now waits for its retry (still unanswered).
        #expect(done.wait(timeout: .now() + .milliseconds(200)) == .timedOut)
        api.cancel()
        #expect(done.wait(timeout: .now() + 5) == .success)
        guard case .failure(let error)? = answer.current else {
            Issue.record("a cancelled call gave \(String(describing: answer.current))")
            return
        }
        #expect(error.kind == .cancelled)
        #expect(fake.requests.current == 1, "nothing asked after cancel()")

        // And a call after cancel() does not ask at all.
        let later = DispatchSemaphore(value: 0)
        let refused = history(api, done: later)
        #expect(later.wait(timeout: .now() + 5) == .success)
        if case .failure(let error)? = refused.current { #expect(error.kind == .cancelled) } else { Issue.record("asked after cancel()") }
        #expect(fake.requests.current == 1)
    }
}
