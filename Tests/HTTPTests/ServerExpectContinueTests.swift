import Foundation
import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct ServerExpectContinueTests {
    @Test func interim100BeforeTheBodyOnARawSocket() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        try client.send("POST /up HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        let interim = try client.readResponse()
        #expect(interim.status == 100)
        #expect(!client.hasActivity(within: 0.05))
        try client.send("hello")
        let final = try client.readResponse()
        #expect(final.status == 200 && final.bodyText == "POST /up hello")
    }

    /// The interim answer of a pipelined request waits for the final answers before it.
    @Test func interim100WaitsForEarlierAnswers() throws {
        let held = Locked<HTTPResponder?>(nil)
        let server = try TestServer(handler: { request, responder in
            if request.path == "/hold" { held.withLock { $0 = responder } } else { TestServer.echo(request, responder) }
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/hold")
            + "POST /second HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\n")
        #expect(waitUntil(timeout: 5) { held.current != nil })
        #expect(!client.hasActivity(within: 0.2))
        held.current?.respond(HTTPResponse(status: 200, contentType: "text/plain", body: "first"))
        #expect(try client.readResponse().bodyText == "first")
        #expect(try client.readResponse().status == 100)
        try client.send("abc")
        #expect(try client.readResponse().bodyText == "POST /second abc")
    }

    @Test func tooLargeWithExpectGets413InsteadOf100() throws {
        let server = try TestServer({ $0.maxBodyBytes = 10 })
        defer { server.stop() }
        let client = try server.client()
        try client.send("POST /up HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 11\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 413 && response.header("Connection") == "close")
    }

    @Test func curlWithExpectContinueGetsTheInterimResponse() throws {
        let server = try TestServer()
        defer { server.stop() }
        let body = String(repeating: "x", count: 100)
        let result = try curl([
            "-sS", "-v", "--http1.1", "-H", "Expect: 100-continue", "--data-binary", body,
            "http://127.0.0.1:\(server.port)/curl",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("HTTP/1.1 100 Continue"), "\(result.stderr)")
        #expect(result.stdout == "POST /curl " + body)
    }

    @Test func curlReusesTheKeepAliveConnection() throws {
        let server = try TestServer()
        defer { server.stop() }
        let base = "http://127.0.0.1:\(server.port)"
        let result = try curl(["-sS", "-v", "--http1.1", "\(base)/a", "\(base)/b"])
        #expect(result.status == 0)
        #expect(result.stdout == "GET /a GET /b ")
        #expect(result.stderr.lowercased().contains("re-using existing connection")
            || result.stderr.lowercased().contains("reusing existing connection"), "\(result.stderr)")
    }
}

/// Runs the installed `curl` with a time limit and collects its output.
private func curl(_ arguments: [String]) throws -> CommandResult {
    try CommandRunner.run("/usr/bin/curl", ["--max-time", "10"] + arguments)
}
