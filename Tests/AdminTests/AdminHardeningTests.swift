import Foundation
import Testing
@testable import StoreRelayGateway
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// The admin listener's defences (security review, point 5): wrong tokens are throttled per
/// address and logged, the page answers only to an address or localhost as `Host`, and its
/// cookie is `Secure` with the `__Host-` prefix behind a TLS proxy.
@Suite struct AdminHardeningTests {
    /// The throttle's clock is a manual one: its pauses end when the test says, not when a
    /// loaded machine happens to get there.
    @Test func wrongBearerTokensAreThrottledPerAddressEvenForTheRightOne() throws {
        let clock = ManualClock()
        let admin = try AdminHarness(clock: clock)
        for attempt in 1...LoginThrottle.allowedFailures {
            let wrong = try admin.curl("/api/status", headers: ["Authorization: Bearer not-the-token-\(attempt)"])
            #expect(wrong.status == 401, "attempt \(attempt)")
        }
        // Paused now: not even the right token is compared, so guessing gains nothing.
        let refused = try admin.curl("/api/status", headers: [admin.bearer])
        #expect(refused.status == 429)
        #expect(refused.json?["error"]?.stringValue == "too_many_attempts")
        #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1)
        // Another address is not paused by this one's failures.
        let other = try CommandRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "127.0.0.2",
                                                   "-H", admin.bearer, admin.baseURL + "/api/status"])
        #expect(other.stdout == "200", "\(other.stderr)")
        // The pause ends; a success then forgets the failures.
        clock.advance(by: .seconds(2))
        #expect(try admin.curl("/api/status", headers: [admin.bearer]).status == 200)
        #expect(try admin.curl("/api/status", headers: ["Authorization: Bearer wrong"]).status == 401)
    }

    @Test func theLoginFormIsThrottledToo() throws {
        let clock = ManualClock()
        let admin = try AdminHarness(clock: clock)
        let jar = try CookieJar()
        for _ in 1...LoginThrottle.allowedFailures {
            #expect(try jar.logIn(admin, token: "guess").status == 401)
        }
        let paused = try jar.logIn(admin)
        #expect(paused.status == 429)
        #expect(paused.body.contains("Too many wrong tokens"))
        #expect(paused.headers["set-cookie"] == nil)
        clock.advance(by: .seconds(2))
        #expect(try jar.logIn(admin).status == 303)
    }

    @Test func failedLoginsAreLoggedWithTheAddress() throws {
        let sink = MemorySink()
        let throttle = LoginThrottle(clock: WallClock())
        let logger = Logger(label: "test", level: .info, sink: sink)
        let handler = AdminHandler(
            backend: try FakeBackend(), token: String(repeating: "t", count: 40), metrics: { "" }, metricsContentType: "text/plain",
            sessions: AdminSessions(clock: WallClock(), lifetime: .seconds(60), secret: "t"), throttle: throttle, clock: WallClock(), logger: logger)
        var request = HTTPRequest(method: "POST", target: "/login", headers: ["Host": "127.0.0.1:9090"], body: Array("token=nope".utf8))
        request.remoteAddress = "192.0.2.7:4711"
        request.remoteHost = "192.0.2.7"
        #expect(handler.respond(to: request).status == 401)
        let logged = try #require(sink.lines.first { $0.contains("admin authentication failed") })
        #expect(logged.contains("192.0.2.7:4711"))
        #expect(logged.contains("login form"))
        #expect(!logged.contains("nope"))
    }

    @Test func thePageAnswersOnlyToAnAddressOrLocalhost() throws {
        let admin = try AdminHarness()
        for host in ["127.0.0.1:\(admin.port)", "localhost:\(admin.port)", "localhost", "[::1]:9090", "10.1.2.3"] {
            #expect(try admin.curl("/login", headers: ["Host: \(host)"]).status == 200, "\(host)")
        }
        for host in ["evil.example", "evil.example:\(admin.port)", "127.0.0.1.nip.io:\(admin.port)", "localhost.evil.example"] {
            let refused = try admin.curl("/login", headers: ["Host: \(host)"])
            #expect(refused.status == 421, "\(host)")
            #expect(refused.json?["error"]?.stringValue == "misdirected")
            #expect(try admin.curl("/", headers: ["Host: \(host)", admin.bearer]).status == 421, "\(host)")
        }
        // Scripts with the token reach the API and /metrics under any name.
        #expect(try admin.curl("/api/status", headers: ["Host: admin.internal:9090", admin.bearer]).status == 200)
        #expect(try admin.curl("/metrics", headers: ["Host: metrics.internal"]).status == 200)
    }

    @Test func behindATLSProxyTheCookieIsSecureAndHostPrefixed() throws {
        let admin = try AdminHarness()
        let jar = try CookieJar()
        let plain = try jar.logIn(admin)
        let plainCookie = try #require(plain.headers["set-cookie"])
        #expect(plainCookie.hasPrefix("storerelay_session="))
        #expect(!plainCookie.contains("Secure"))

        let proxied = try admin.curl("/login", method: "POST", headers: ["X-Forwarded-Proto: https"], body: "token=" + admin.token)
        let cookie = try #require(proxied.headers["set-cookie"])
        #expect(cookie.hasPrefix("__Host-storerelay_session="))
        #expect(cookie.contains("; Secure") && cookie.contains("Path=/") && !cookie.contains("Domain"))
        let id = try #require(cookie.split(separator: ";").first?.split(separator: "=", maxSplits: 1).last)
        let page = try admin.curl("/", headers: ["Cookie: __Host-storerelay_session=\(id)", "X-Forwarded-Proto: https"])
        #expect(page.status == 200)
    }

    @Test func theThrottleForgetsQuietAddressesBeyondItsBound() {
        let clock = ManualClock()
        let throttle = LoginThrottle(clock: clock)
        for index in 0..<(LoginThrottle.maximumAddresses + 10) {
            throttle.recordFailure(from: "10.0.\(index / 256).\(index % 256)")
            clock.advance(by: .milliseconds(1))
        }
        // The bound holds, and the newest addresses are still remembered.
        #expect(throttle.addressCount <= LoginThrottle.maximumAddresses)
        #expect(throttle.addressCount > LoginThrottle.maximumAddresses / 2)
        for _ in 1..<LoginThrottle.allowedFailures { throttle.recordFailure(from: "10.0.16.9") }
        #expect(throttle.pause(for: "10.0.16.9") != nil)
        // Pauses double, up to the maximum.
        var last: Duration = .zero
        for _ in 0..<30 { last = throttle.recordFailure(from: "10.0.16.9") ?? .zero }
        #expect(last == LoginThrottle.maximumPause)
        throttle.recordSuccess(from: "10.0.16.9")
        #expect(throttle.pause(for: "10.0.16.9") == nil)
    }
}
