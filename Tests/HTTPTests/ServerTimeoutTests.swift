import Dispatch
import Testing
import StoreRelayNet
import StoreRelayTestSupport

@Suite struct ServerTimeoutTests {
    /// A client trickling one byte every 200 ms never completes its head within the read
    /// timeout: it gets 408 and the connection closes, however long it keeps trickling.
    @Test func slowClientGets408() throws {
        let server = try TestServer({ $0.readTimeout = .milliseconds(600); $0.idleTimeout = .seconds(30) })
        defer { server.stop() }
        let client = try server.client()
        let trickle = Array("GET / HTTP/1.1\r\nHost: a\r\nX-Slow: ".utf8) + Array(repeating: UInt8(ascii: "z"), count: 100)
        var sent = 0
        while sent < trickle.count && !client.hasActivity(within: 0.2) {
            try client.send([trickle[sent]])
            sent += 1
        }
        #expect(sent < trickle.count, "the server never answered the trickling client")
        let response = try client.readResponse()
        #expect(response.status == 408)
        #expect(response.header("Connection") == "close")
        #expect(response.bodyText.contains("\"timeout\""))
        #expect(client.waitForClose(within: 5))
    }

    @Test func idleKeepAliveConnectionIsClosedQuietly() throws {
        let server = try TestServer({ $0.idleTimeout = .milliseconds(300) })
        defer { server.stop() }
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/once"))
        #expect(try client.readResponse().status == 200)
        #expect(client.waitForClose(within: 5))
        let silent = try server.client()
        #expect(silent.waitForClose(within: 5))
        #expect(waitUntil(timeout: 5) { server.server.connectionCount == 0 })
    }

    @Test func handlerTimeIsNotCountedAsReadOrIdleTime() throws {
        let server = try TestServer({ $0.readTimeout = .milliseconds(200); $0.idleTimeout = .milliseconds(200) },
                                    handler: { request, responder in
            // Dispatch, not a Task: blocking socket tests can occupy the whole cooperative pool.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(600)) {
                responder.respond(HTTPResponse(status: 200, contentType: "text/plain", body: request.path))
            }
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/slow-handler"))
        let response = try client.readResponse()
        #expect(response.status == 200 && response.bodyText == "/slow-handler")
    }
}
