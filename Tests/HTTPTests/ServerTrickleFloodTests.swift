import Dispatch
import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Issue 25, point 4: trickling connections from six addresses, 256 each and re-opened as
/// soon as closed, filled `max-connections` and held the listener: genuine notifications
/// waited 8–20 s or were reset. Now tricklers are closed by the minimum body rate and give
/// way at the limit, and a genuine request is answered at once throughout.
@Suite("Trickle flood", .serialized)
struct ServerTrickleFloodTests {
    static let sources = (2...7).map { "127.0.0.\($0)" }
    static let perSource = 256

    /// 1,536 trickling sockets here, up to `maxConnections` in the server, and a few more.
    static let descriptorsNeeded = 4_096

    @Test(.enabled(if: DescriptorLimit.raise(toAtLeast: descriptorsNeeded),
                   "needs \(descriptorsNeeded) file descriptors (RLIMIT_NOFILE, even raised to its hard limit)"))
    func genuineRequestsAreAnsweredWithinTwoSecondsThroughout() throws {
        let server = try TestServer({
            // The gateway's defaults, but a shorter grace so that the rate check takes turns
            // with shedding during the test.
            $0.maxConnections = 1024
            $0.maxConnectionsPerAddress = 256
            $0.readTimeout = .seconds(10)
            $0.headerTimeout = .seconds(5)
            $0.minBodyRate = 1024
            $0.bodyRateGrace = .seconds(1)
        })
        defer { server.stop() }
        let fleet = TricklerFleet(port: server.port, sources: Self.sources, perSource: Self.perSource)
        fleet.start()
        defer { fleet.stop() }
        #expect(waitUntil(timeout: 10) { server.server.connectionCount >= 1000 },
                "the fleet did not fill the server: \(server.server.connectionCount) open")

        var slowest = 0.0
        var answered = 0
        let body = String(repeating: "n", count: 2_000)
        let end = MonotonicClock.nanoseconds() + 5_000_000_000
        while MonotonicClock.nanoseconds() < end {
            let started = MonotonicClock.nanoseconds()
            // A new connection for each, as a notification from Apple comes.
            let client = try server.client(timeout: 5)
            try client.send(RawHTTPClient.request("POST", "/notify", body: body))
            let response = try client.readResponse()
            let seconds = Double(MonotonicClock.nanoseconds() - started) / 1e9
            #expect(response.status == 200)
            #expect(seconds < 2, "a genuine request took \(seconds) s behind the tricklers")
            slowest = max(slowest, seconds)
            answered += 1
            usleep(100_000)
        }
        let counts = fleet.current
        // The attack was on: the tricklers kept being closed (shed, or 408 for their rate)
        // and came back.
        #expect(counts.closedByServer >= 1_000, "\(counts)")
        #expect(counts.connected >= Self.sources.count * Self.perSource + 1_000, "\(counts)")
        #expect(answered >= 3, "only \(answered) genuine requests in 5 s (slowest \(slowest) s)")
    }
}
