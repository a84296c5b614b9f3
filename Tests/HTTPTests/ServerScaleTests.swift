@testable import StoreRelayNet
import CStoreRelayShims
#if canImport(Glibc)
import Glibc
#endif
import Testing
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct ServerScaleTests {
    /// 300 connections each with a request in flight at the same moment (the handler holds
    /// every answer until all have arrived) while the process keeps a small thread count.
    @Test func threeHundredConcurrentConnections() throws {
        let count = 300
        let held = Locked<[HTTPResponder]>([])
        let server = try TestServer({ $0.maxConnections = 1000; $0.maxConnectionsPerAddress = 1000 }, handler: { request, responder in
            held.withLock { $0.append(responder) }
        })
        defer { server.stop() }
        let clients = try (0..<count).map { _ in try server.client(timeout: 20) }
        for (index, client) in clients.enumerated() {
            try client.send(RawHTTPClient.request("GET", "/c/\(index)"))
        }
        #expect(waitUntil(timeout: 30) { held.current.count == count }, "only \(held.current.count) requests arrived")
        #expect(server.server.connectionCount == count)
        // The count is process-wide and other suites run in parallel, each with threads of its
        // own; half the connection count still proves there is no thread per connection.
        let threads = try #require(processThreadCount())
        #expect(threads < count / 2, "\(threads) threads for \(count) connections")
        for (index, responder) in held.current.enumerated() {
            responder.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "r\(index)"))
        }
        for client in clients {
            let response = try client.readResponse()
            #expect(response.status == 200)
        }
    }

    /// At `maxConnections` with every connection busy the server stops accepting; a waiting
    /// connection is served as soon as one becomes idle (it is shed) or closes.
    @Test func connectionsBeyondTheCapWaitWhileEveryConnectionIsBusy() throws {
        let held = Locked<[String: HTTPResponder]>([:])
        let server = try TestServer({ $0.maxConnections = 2; $0.acceptBackoff = .milliseconds(50) }, handler: { request, responder in
            if request.path.hasPrefix("/held") { held.withLock { $0[request.path] = responder } } else { TestServer.echo(request, responder) }
        })
        defer { server.stop() }
        let first = try server.client()
        let second = try server.client()
        try first.send(RawHTTPClient.request("GET", "/held/1"))
        try second.send(RawHTTPClient.request("GET", "/held/2"))
        #expect(waitUntil(timeout: 5) { held.current.count == 2 })
        let third = try server.client()
        try third.send(RawHTTPClient.request("GET", "/third"))
        #expect(!third.hasActivity(within: 0.3))
        #expect(server.server.connectionCount == 2)
        held.current["/held/1"]?.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "first"))
        #expect(try first.readResponse().bodyText == "first")
        // The first connection is idle now: it makes room for the third.
        #expect(try third.readResponse().bodyText == "GET /third ")
        #expect(first.waitForClose(within: 5))
        held.current["/held/2"]?.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "second"))
        #expect(try second.readResponse().bodyText == "second")
    }

    /// At `maxConnections` a new connection takes the place of the oldest idle one.
    @Test func theOldestIdleConnectionMakesRoomAtTheCap() throws {
        let server = try TestServer({ $0.maxConnections = 3 })
        defer { server.stop() }
        let clients = try (0..<3).map { _ in try server.client() }
        for (index, client) in clients.enumerated() {
            try client.send(RawHTTPClient.request("GET", "/idle/\(index)"))
            #expect(try client.readResponse().status == 200)
        }
        let newcomer = try server.client()
        try newcomer.send(RawHTTPClient.request("GET", "/new"))
        #expect(try newcomer.readResponse().bodyText == "GET /new ")
        #expect(clients[0].waitForClose(within: 5), "the oldest idle connection was not shed")
        #expect(!clients[2].waitForClose(within: 0.2))
        try clients[2].send(RawHTTPClient.request("GET", "/still"))
        #expect(try clients[2].readResponse().status == 200)
    }
}

/// Accept failing for lack of descriptors pauses the accept source instead of spinning.
@Suite struct ServerAcceptBackoffTests {
    @Test func emfileOnAcceptBacksOffThenRecovers() throws {
        let calls = Locked(0)
        let firstCall = Locked<UInt64?>(nil)
        var configuration = HTTPServerConfiguration(address: "127.0.0.1:0")
        configuration.acceptBackoff = .milliseconds(100)
        // Descriptors "run out" for the first 400 ms after the first accept attempt.
        let server = HTTPServer(configuration: configuration, logger: .disabled, handler: TestServer.echo) { fd, address, length in
            calls.withLock { $0 += 1 }
            let now = MonotonicClock.nanoseconds()
            let start = firstCall.withLock { first -> UInt64 in
                if first == nil { first = now }
                return first!
            }
            if now - start < 400_000_000 {
                errno = EMFILE
                return -1
            }
            return storerelay_accept4_nonblocking(fd, address, length)
        }
        let port = try server.start()
        defer { server.shutdown() }
        let client = try RawHTTPClient(port: port)
        try client.send(RawHTTPClient.request("GET", "/after-emfile"))
        #expect(try client.readResponse().bodyText == "GET /after-emfile ")
        // About four failures, each followed by a 100 ms pause, then a success (and maybe an
        // EAGAIN): an accept loop that spins would have made thousands of calls.
        #expect(calls.current <= 12, "\(calls.current) accept calls")
        #expect(calls.current >= 2)
    }
}
