import Dispatch
import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// One client cannot block the listener (security review, finding 2): a connection that says
/// nothing gets the read timeout, one address holds at most `maxConnectionsPerAddress`, and
/// idle connections make room for new ones.
@Suite struct ServerConnectionLimitTests {
    @Test func aConnectionThatSendsNothingGetsTheReadTimeoutNotTheIdleTimeout() throws {
        let server = try TestServer({ $0.readTimeout = .milliseconds(300); $0.idleTimeout = .seconds(60) })
        defer { server.stop() }
        let silent = try server.client()
        #expect(silent.waitForClose(within: 3), "a silent connection was kept past the read timeout")
        // After a request, the idle timeout applies.
        let served = try server.client()
        try served.send(RawHTTPClient.request("GET", "/once"))
        #expect(try served.readResponse().status == 200)
        #expect(!served.waitForClose(within: 1))
    }

    @Test func idleConnectionsOfOneAddressMakeRoomForItsNewOnes() throws {
        let server = try TestServer({ $0.maxConnectionsPerAddress = 8 })
        defer { server.stop() }
        let flood = try (0..<40).map { _ in try server.client(source: "127.0.0.2") }
        #expect(waitUntil(timeout: 5) { server.server.connectionCount <= 8 }, "\(server.server.connectionCount) open")
        // The newest of the flood is still open and is served.
        let last = try #require(flood.last)
        try last.send(RawHTTPClient.request("GET", "/last"))
        #expect(try last.readResponse().bodyText == "GET /last ")
        #expect(flood[0].waitForClose(within: 1))
        // Another address is not limited by the first one's connections.
        let other = try server.client()
        try other.send(RawHTTPClient.request("GET", "/other"))
        #expect(try other.readResponse().bodyText == "GET /other ")
    }

    @Test func anAddressWhoseConnectionsAreAllBusyIsRefusedOthersAreServed() throws {
        let held = Locked<[HTTPResponder]>([])
        let server = try TestServer({ $0.maxConnectionsPerAddress = 3 }, handler: { request, responder in
            if request.path == "/held" { held.withLock { $0.append(responder) } } else { TestServer.echo(request, responder) }
        })
        defer {
            for responder in held.current { responder.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "")) }
            server.stop()
        }
        let busy = try (0..<3).map { _ in try server.client(source: "127.0.0.2") }
        for client in busy { try client.send(RawHTTPClient.request("GET", "/held")) }
        #expect(waitUntil(timeout: 5) { held.current.count == 3 })
        let refused = try server.client(source: "127.0.0.2")
        #expect(refused.waitForClose(within: 3), "a fourth connection from a busy address was kept")
        let other = try server.client()
        try other.send(RawHTTPClient.request("GET", "/other"))
        #expect(try other.readResponse().bodyText == "GET /other ")
    }

    /// At the global limit, idle connections of any address are shed before accept pauses.
    @Test func aFloodOfIdleConnectionsFromManyAddressesDoesNotStopAccepting() throws {
        let server = try TestServer({ $0.maxConnections = 32; $0.maxConnectionsPerAddress = 32 })
        defer { server.stop() }
        var flood: [RawHTTPClient] = []
        for index in 0..<96 { flood.append(try server.client(source: "127.0.0.\(2 + index % 3)")) }
        let started = MonotonicClock.nanoseconds()
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/prompt"))
        #expect(try client.readResponse().bodyText == "GET /prompt ")
        #expect(MonotonicClock.nanoseconds() - started < 3_000_000_000)
        // Shed connections close on their own queues, a moment after making room.
        #expect(waitUntil(timeout: 5) { server.server.connectionCount <= 32 }, "\(server.server.connectionCount) open")
        _ = flood
    }
}
