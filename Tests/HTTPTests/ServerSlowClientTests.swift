import Dispatch
import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Slow clients are closed on clocks of their own, well before the read timeout, and give way
/// at the connection limit (issue 25, point 4). Every server here has a long read timeout,
/// so only the new rules can close them in time.
@Suite struct ServerSlowClientTests {
    /// A head trickled a byte every 100 ms gets 408 at the header timeout.
    @Test func aHeadTrickledPastTheHeaderTimeoutGets408() throws {
        let server = try TestServer({ $0.readTimeout = .seconds(30); $0.headerTimeout = .milliseconds(500) })
        defer { server.stop() }
        let client = try server.client()
        let started = MonotonicClock.nanoseconds()
        let head = Array("GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "z"), count: 100)
        var sent = 0
        while sent < head.count && !client.hasActivity(within: 0.1) {
            try client.send([head[sent]])
            sent += 1
        }
        let response = try client.readResponse()
        let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(response.status == 408 && response.bodyText.contains("\"timeout\""))
        #expect(seconds >= 0.4 && seconds < 3, "answered after \(seconds) s")
        #expect(client.waitForClose(within: 5))
    }

    /// The header timeout bounds the head only: a body that keeps up may take longer.
    @Test func aBodyAtTheMinimumRateIsServedPastTheHeaderTimeout() throws {
        let server = try TestServer({
            $0.readTimeout = .seconds(30)
            $0.headerTimeout = .milliseconds(300)
            $0.minBodyRate = 100
            $0.bodyRateGrace = .milliseconds(200)
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send("POST /steady HTTP/1.1\r\nHost: a\r\nContent-Length: 80\r\n\r\n")
        // 20 bytes every 100 ms: twice the minimum rate, for 400 ms in all.
        for _ in 0..<4 {
            usleep(100_000)
            try client.send(String(repeating: "b", count: 20))
        }
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "POST /steady " + String(repeating: "b", count: 80))
    }

    /// A head announcing a body, then a byte every 100 ms (10 B/s against a floor of
    /// 100 B/s): 408 soon after the grace, not at the read timeout.
    @Test func aBodyBelowTheMinimumRateGets408() throws {
        let server = try TestServer({
            $0.readTimeout = .seconds(30)
            $0.minBodyRate = 100
            $0.bodyRateGrace = .milliseconds(300)
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send("POST /trickle HTTP/1.1\r\nHost: a\r\nContent-Length: 1000\r\n\r\n")
        let started = MonotonicClock.nanoseconds()
        var sent = 0
        while sent < 1000 && !client.hasActivity(within: 0.1) {
            try client.send("x")
            sent += 1
        }
        let response = try client.readResponse()
        let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
        #expect(response.status == 408)
        // The grace, plus a few bytes' worth at the floor (each buys 10 ms).
        #expect(seconds >= 0.3 && seconds < 3, "answered after \(seconds) s, \(sent) bytes sent")
        #expect(client.waitForClose(within: 5))
    }

    /// At `maxConnections`, held by tricklers of one client and a request being answered,
    /// a newcomer from another client takes a trickler's place at once; the request being
    /// answered is not touched.
    @Test func atTheLimitATricklerGivesWayNotARequestBeingAnswered() throws {
        let held = Locked<[HTTPResponder]>([])
        let server = try TestServer({
            $0.maxConnections = 3
            $0.readTimeout = .seconds(30)
            $0.minBodyRate = 0
            $0.acceptBackoff = .milliseconds(50)
        }, handler: { request, responder in
            if request.path == "/held" { held.withLock { $0.append(responder) } } else { TestServer.echo(request, responder) }
        })
        defer { server.stop() }
        let busy = try server.client(source: "127.0.0.3")
        try busy.send(RawHTTPClient.request("GET", "/held"))
        #expect(waitUntil(timeout: 5) { held.current.count == 1 })
        let tricklers = try (0..<2).map { _ in try server.client(source: "127.0.0.2") }
        for trickler in tricklers { try trickler.send("POST /slow HTTP/1.1\r\nHost: a\r\nContent-Length: 100\r\n\r\nab") }
        #expect(waitUntil(timeout: 5) { server.server.connectionCount == 3 })
        usleep(100_000)

        let started = MonotonicClock.nanoseconds()
        let newcomer = try server.client()
        try newcomer.send(RawHTTPClient.request("GET", "/new"))
        #expect(try newcomer.readResponse().bodyText == "GET /new ")
        #expect(MonotonicClock.nanoseconds() - started < 2_000_000_000)
        #expect(tricklers.contains { $0.waitForClose(within: 2) }, "no trickler gave way")
        held.current.first?.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "kept"))
        #expect(try busy.readResponse().bodyText == "kept")
    }
}
