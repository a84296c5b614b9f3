import Foundation
import Testing
@testable import StoreRelayGateway
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// The admin listener's defences (security review, point 5): wrong tokens are throttled per
/// client and logged, the page answers only to an address or localhost as `Host`, and its
/// cookie is `Secure` with the `__Host-` prefix behind a TLS proxy.
@Suite struct AdminHardeningTests {
    /// The throttle's clock is a manual one: its pauses end when the test says, not when a
    /// loaded machine happens to get there.
    @Test func wrongBearerTokensAreThrottledPerAddressButNeverTheRightOne() throws {
        let clock = ManualClock()
        let admin = try AdminHarness(clock: clock)
        for attempt in 1...LoginThrottle.allowedFailures {
            let wrong = try admin.curl("/api/status", headers: ["Authorization: Bearer not-the-token-\(attempt)"])
            #expect(wrong.status == 401, "attempt \(attempt)")
        }
        // Paused now: a wrong token is refused without being counted...
        let refused = try admin.curl("/api/status", headers: ["Authorization: Bearer not-the-token-6"])
        #expect(refused.status == 429)
        #expect(refused.json?["error"]?.stringValue == "too_many_attempts")
        #expect(Int(refused.headers["retry-after"] ?? "") ?? 0 >= 1)
        #expect(try admin.curl("/api/status").status == 429, "no token at all is no better")
        // ...and the right one goes through: a pause must not lock the operator out.
        #expect(try admin.curl("/api/status", headers: [admin.bearer]).status == 200)
        #expect(try admin.curl("/", headers: [admin.bearer]).status == 200, "the page with the bearer token too")
        // Another address is not paused by this one's failures.
        let other = try CommandRunner.run("curl", ["-sS", "-o", "/dev/null", "-w", "%{http_code}", "--interface", "127.0.0.2",
                                                   "-H", "Authorization: Bearer wrong", admin.baseURL + "/api/status"])
        #expect(other.stdout == "401", "\(other.stderr)")
        // The pause ends: the next wrong token is answered 401 again (and pauses longer).
        clock.advance(by: .seconds(2))
        #expect(try admin.curl("/api/status", headers: ["Authorization: Bearer wrong"]).status == 401)
        #expect(try admin.curl("/api/status", headers: ["Authorization: Bearer wrong"]).status == 429)
    }

    /// Issue 25, point 7: one wrong token per pause used to keep the right token refused for
    /// good. Whatever arrives in between, the right token is answered.
    @Test func oneWrongTokenPerPauseNeverLocksOutTheRightOne() throws {
        let clock = ManualClock()
        let admin = try AdminHarness(clock: clock)
        for _ in 1...LoginThrottle.allowedFailures {
            _ = try admin.curl("/api/status", headers: ["Authorization: Bearer wrong"])
        }
        for round in 1...6 {
            // Each pause, once over, takes one more wrong token, which starts the next one.
            clock.advance(by: LoginThrottle.maximumPause)
            #expect(try admin.curl("/api/status", headers: ["Authorization: Bearer wrong"]).status == 401, "round \(round)")
            #expect(try admin.curl("/api/status", headers: ["Authorization: Bearer wrong"]).status == 429, "round \(round)")
            #expect(try admin.curl("/api/status", headers: [admin.bearer]).status == 200, "round \(round)")
        }
    }

    @Test func theLoginFormIsThrottledButNotForTheRightToken() throws {
        let clock = ManualClock()
        let admin = try AdminHarness(clock: clock)
        let jar = try CookieJar()
        for _ in 1...LoginThrottle.allowedFailures {
            #expect(try jar.logIn(admin, token: "guess").status == 401)
        }
        let paused = try jar.logIn(admin, token: "guess")
        #expect(paused.status == 429)
        #expect(paused.body.contains("Too many wrong tokens"))
        #expect(paused.headers["set-cookie"] == nil)
        #expect(Int(paused.headers["retry-after"] ?? "") ?? 0 >= 1)
        let loggedIn = try jar.logIn(admin)
        #expect(loggedIn.status == 303 && loggedIn.headers["set-cookie"] != nil, "the right token logs in while paused")
        // A login forgets the failures.
        #expect(try jar.logIn(admin, token: "guess").status == 401)
    }

    /// Behind a `trusted-proxy`, failures count against the client its `X-Forwarded-For`
    /// names, so one client's wrong tokens pause that client, not everyone behind the proxy.
    /// Without the directive the header is not believed: anyone can send it.
    @Test func behindATrustedProxyFailuresAreCountedPerForwardedClient() async throws {
        func handler(trusting proxies: [String]) throws -> AdminHandler {
            let clock = ManualClock()
            return AdminHandler(
                backend: try FakeBackend(), token: String(repeating: "t", count: 40), metrics: { "" }, metricsContentType: "text/plain",
                sessions: AdminSessions(clock: clock, lifetime: .seconds(60), secret: "t"), throttle: LoginThrottle(clock: clock),
                clients: AdminClientAddress(trustedProxies: try proxies.map(IPAddressRange.parse)), clock: clock, logger: .disabled)
        }
        func status(_ handler: AdminHandler, forwardedFor: String, token: String = "wrong", peer: String = "10.1.2.3") async -> Int {
            var request = HTTPRequest(method: "GET", target: "/api/status",
                                      headers: ["Authorization": "Bearer \(token)", "X-Forwarded-For": forwardedFor])
            request.remoteAddress = peer + ":40000"
            request.remoteHost = peer
            return await handler.respond(to: request).status
        }
        let proxied = try handler(trusting: ["10.0.0.0/8"])
        for _ in 1...LoginThrottle.allowedFailures { #expect(await status(proxied, forwardedFor: "198.51.100.1") == 401) }
        #expect(await status(proxied, forwardedFor: "198.51.100.1") == 429)
        #expect(await status(proxied, forwardedFor: "198.51.100.2") == 401, "another client behind the same proxy")
        // What a client writes left of the address the proxy appended proves nothing.
        #expect(await status(proxied, forwardedFor: "198.51.100.2, 198.51.100.1") == 429)
        // A peer that is not a trusted proxy is its own client, whatever it forwards.
        #expect(await status(proxied, forwardedFor: "198.51.100.1", peer: "203.0.113.5") == 401)
        #expect(await status(proxied, forwardedFor: "198.51.100.1", token: String(repeating: "t", count: 40)) == 200)

        let unconfigured = try handler(trusting: [])
        for index in 1...LoginThrottle.allowedFailures {
            #expect(await status(unconfigured, forwardedFor: "198.51.100.\(index)") == 401)
        }
        #expect(await status(unconfigured, forwardedFor: "198.51.100.99") == 429, "the header is not believed: keyed by the peer")
        #expect(await status(unconfigured, forwardedFor: "198.51.100.99", token: String(repeating: "t", count: 40)) == 200)
    }

    /// Reading `X-Forwarded-For` from the right, past every trusted hop.
    @Test func theClientIsTheFirstUntrustedHopFromTheRight() throws {
        let clients = AdminClientAddress(trustedProxies: try ["10.0.0.0/8", "fd00::/8"].map(IPAddressRange.parse))
        func client(_ forwarded: [String], peer: String) -> String {
            var request = HTTPRequest(method: "GET", target: "/", headers: HTTPHeaders(forwarded.map { ("X-Forwarded-For", $0) }))
            request.remoteHost = peer
            return clients.client(of: request)
        }
        #expect(client(["198.51.100.1"], peer: "10.0.0.1") == "198.51.100.1")
        #expect(client(["1.1.1.1, 198.51.100.1, 10.9.9.9"], peer: "10.0.0.1") == "198.51.100.1", "two proxies")
        #expect(client(["1.1.1.1", "198.51.100.1"], peer: "::ffff:10.0.0.1") == "198.51.100.1", "two header lines; a mapped peer")
        #expect(client(["2001:db8::7"], peer: "fd00::1") == "2001:db8::7")
        #expect(client([], peer: "10.0.0.1") == "10.0.0.1", "no header: the proxy itself")
        #expect(client(["10.0.0.7"], peer: "10.0.0.1") == "10.0.0.7", "only proxies: the farthest")
        #expect(client(["unknown, 198.51.100.1"], peer: "10.0.0.1") == "198.51.100.1")
        #expect(client(["198.51.100.1, unknown"], peer: "10.0.0.1") == "10.0.0.1", "garbage a proxy appended: the proxy")
        #expect(client(["198.51.100.1"], peer: "203.0.113.5") == "203.0.113.5", "not a trusted proxy")
    }

    @Test func failedLoginsAreLoggedWithTheAddress() async throws {
        let sink = MemorySink()
        let throttle = LoginThrottle(clock: WallClock())
        let logger = Logger(label: "test", level: .info, sink: sink)
        let handler = AdminHandler(
            backend: try FakeBackend(), token: String(repeating: "t", count: 40), metrics: { "" }, metricsContentType: "text/plain",
            sessions: AdminSessions(clock: WallClock(), lifetime: .seconds(60), secret: "t"), throttle: throttle,
            clients: AdminClientAddress(trustedProxies: []), clock: WallClock(), logger: logger)
        var request = HTTPRequest(method: "POST", target: "/login", headers: ["Host": "127.0.0.1:9090"], body: Array("token=nope".utf8))
        request.remoteAddress = "192.0.2.7:4711"
        request.remoteHost = "192.0.2.7"
        #expect(await handler.respond(to: request).status == 401)
        let logged = try #require(sink.lines.first { $0.contains("admin authentication failed") })
        #expect(logged.contains("192.0.2.7:4711"))
        #expect(logged.contains(#""admin.client":"192.0.2.7""#), "\(logged)")
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
