import Testing
import StoreRelayNet
import StoreRelayTestSupport

@Suite struct ServerLimitTests {
    /// Only the head is sent: the 413 must come from Content-Length alone.
    @Test func bodyTooLargeIsAnsweredBeforeTheBodyIsSent() throws {
        let server = try TestServer({ $0.maxBodyBytes = 1024 * 1024 })
        defer { server.stop() }
        let client = try server.client()
        try client.send("POST /big HTTP/1.1\r\nHost: a\r\nContent-Length: 10000000000\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413)
        #expect(response.header("Connection") == "close")
        #expect(response.bodyText.contains("\"too_large\""))
        #expect(client.waitForClose(within: 5))
    }

    @Test func chunkedBodyOverTheLimitGets413() throws {
        let server = try TestServer({ $0.maxBodyBytes = 16 })
        defer { server.stop() }
        let client = try server.client()
        try client.send("POST /big HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n10\r\n0123456789abcdef\r\n1\r\n")
        #expect(try client.readResponse().status == 413)
    }

    @Test func oversizedHeadersGet431() throws {
        let server = try TestServer({ $0.maxHeaderBytes = 16 * 1024 })
        defer { server.stop() }
        let client = try server.client()
        try client.send("GET / HTTP/1.1\r\nHost: a\r\nX-Large: " + String(repeating: "h", count: 20 * 1024) + "\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 431)
        #expect(response.bodyText.contains("\"headers_too_large\""))
        #expect(client.waitForClose(within: 5))
    }

    /// A peer that stops reading: output backs up, reading pauses, and after `writeTimeout`
    /// without progress the connection is dropped instead of holding memory forever.
    @Test func peerThatStopsReadingIsDroppedAfterTheWriteTimeout() throws {
        let big = [UInt8](repeating: UInt8(ascii: "x"), count: 32 * 1024 * 1024)
        let server = try TestServer({ $0.writeTimeout = .milliseconds(300) }, handler: { _, responder in
            responder.respond(HTTPResponse(status: 200, body: big))
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/big"))
        #expect(waitUntil(timeout: 10) { server.server.connectionCount == 0 })
    }
}
