import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct ServerShutdownTests {
    @Test func inFlightRequestIsAnsweredThenNewConnectionsAreRefused() throws {
        let held = Locked<HTTPResponder?>(nil)
        let server = try TestServer(handler: { request, responder in
            if request.path == "/slow" { held.withLock { $0 = responder } } else { TestServer.echo(request, responder) }
        })
        let idle = try server.client()
        try idle.send(RawHTTPClient.request("GET", "/warmup"))
        #expect(try idle.readResponse().status == 200)

        let busy = try server.client()
        try busy.send(RawHTTPClient.request("POST", "/slow", body: "payload"))
        #expect(waitUntil(timeout: 5) { held.current != nil })

        let stopped = Locked(false)
        server.server.shutdown { stopped.withLock { $0 = true } }
        #expect(idle.waitForClose(within: 5), "idle keep-alive connection was not closed")
        #expect(waitUntil(timeout: 5) { (try? RawHTTPClient(port: server.port)) == nil }, "still accepting")
        #expect(!stopped.current)

        held.current?.respond(.json("{\"status\":\"accepted\"}"))
        let response = try busy.readResponse()
        #expect(response.status == 200 && response.bodyText == "{\"status\":\"accepted\"}")
        #expect(response.header("Connection") == "close")
        #expect(busy.waitForClose(within: 5))
        #expect(waitUntil(timeout: 5) { stopped.current })
    }

    @Test func shutdownDeadlineClosesUnansweredConnections() throws {
        let held = Locked<[HTTPResponder]>([])
        let server = try TestServer({ $0.shutdownTimeout = .milliseconds(200) }, handler: { _, responder in
            held.withLock { $0.append(responder) }
        })
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/never"))
        #expect(waitUntil(timeout: 5) { held.current.count == 1 })
        #expect(server.stop())
        #expect(client.waitForClose(within: 5))
    }

    @Test func shutdownOfAServerNeverStartedCompletes() {
        let server = HTTPServer(configuration: .init(address: "127.0.0.1:0"), handler: TestServer.echo)
        let done = Locked(false)
        server.shutdown { done.withLock { $0 = true } }
        #expect(waitUntil(timeout: 5) { done.current })
        #expect(throws: HTTPServerError.self) { try server.start() }
    }
}
