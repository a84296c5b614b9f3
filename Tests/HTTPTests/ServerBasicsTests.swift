import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// The real server over loopback: keep-alive, framing, routing and connection closing.
@Suite struct ServerBasicsTests {
    @Test func keepAliveServesSeveralRequestsOnOneConnection() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        for index in 0..<4 {
            try client.send(RawHTTPClient.request("POST", "/n/\(index)", body: "body \(index)"))
            let response = try client.readResponse()
            #expect(response.status == 200)
            #expect(response.bodyText == "POST /n/\(index) body \(index)")
            #expect(response.header("Connection") == nil)
            #expect(response.header("Date")?.hasSuffix(" GMT") == true)
        }
        try client.send(RawHTTPClient.request("GET", "/last", headers: [("Connection", "close")]))
        let last = try client.readResponse()
        #expect(last.status == 200 && last.header("Connection") == "close")
        #expect(client.waitForClose(within: 5))
    }

    @Test func http10ClosesUnlessKeepAlive() throws {
        let server = try TestServer()
        defer { server.stop() }
        let keepAlive = try server.client()
        try keepAlive.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
        #expect(try keepAlive.readResponse().header("Connection") == "keep-alive")
        try keepAlive.send("GET /b HTTP/1.0\r\n\r\n")
        let second = try keepAlive.readResponse()
        #expect(second.bodyText == "GET /b " && second.header("Connection") == "close")
        #expect(keepAlive.waitForClose(within: 5))
    }

    @Test func chunkedUploadInPieces() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        try client.send("POST /upload HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n")
        try client.send("4;ext=1\r\nWiki\r\n")
        try client.send("5\r\npedia\r\nE\r\n in\r\n\r\nchunks.\r\n")
        try client.send("0\r\nX-Checksum: none\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 200)
        #expect(response.bodyText == "POST /upload Wikipedia in\r\n\r\nchunks.")
    }

    @Test func malformedRequestGets400AndTheConnectionCloses() throws {
        let server = try TestServer()
        defer { server.stop() }
        let client = try server.client()
        try client.send("GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\nGET /next HTTP/1.1\r\nHost: a\r\n\r\n")
        let response = try client.readResponse()
        #expect(response.status == 400)
        #expect(response.header("Connection") == "close")
        #expect(response.header("Content-Type") == "application/json")
        #expect(response.bodyText.hasPrefix("{\"error\":\"malformed\""))
        #expect(client.waitForClose(within: 5))
    }

    @Test func requestsAfterAClosingOneAreNotServed() throws {
        let served = Locked<[String]>([])
        let server = try TestServer(handler: { request, responder in
            served.withLock { $0.append(request.path) }
            responder.respond(HTTPResponse(status: 204))
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/one", headers: [("Connection", "close")])
            + RawHTTPClient.request("GET", "/two"))
        #expect(try client.readResponse().status == 204)
        #expect(client.waitForClose(within: 5))
        #expect(served.current == ["/one"])
    }

    @Test func routerAnswers404And405WithAllowAndHead() throws {
        var router = HTTPRouter()
        router.get("/thing") { _, responder in responder.respond(.json("{\"ok\":true}")) }
        router.post("/thing") { _, responder in responder.respond(HTTPResponse(status: 201)) }
        router.add("DELETE", "/other") { _, responder in responder.respond(HTTPResponse(status: 204)) }
        let server = try TestServer(handler: router.freeze().handler)
        defer { server.stop() }
        let client = try server.client()

        try client.send(RawHTTPClient.request("GET", "/missing"))
        let missing = try client.readResponse()
        #expect(missing.status == 404 && missing.bodyText.contains("\"not_found\""))

        try client.send(RawHTTPClient.request("PUT", "/thing"))
        let wrongMethod = try client.readResponse()
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.header("Allow") == "GET, HEAD, POST")
        #expect(wrongMethod.bodyText.contains("\"method_not_allowed\""))

        try client.send(RawHTTPClient.request("HEAD", "/thing?x=1"))
        let head = try client.readResponse(forHead: true)
        #expect(head.status == 200 && head.header("Content-Length") == "11")
        // The next response must come straight after the head: no body bytes in between.
        try client.send(RawHTTPClient.request("GET", "/thing"))
        let get = try client.readResponse()
        #expect(get.status == 200 && get.bodyText == "{\"ok\":true}")

        try client.send(RawHTTPClient.request("HEAD", "/other"))
        #expect(try client.readResponse(forHead: true).header("Allow") == "DELETE")
    }

    @Test func listensOnIPv6Loopback() throws {
        var configuration = HTTPServerConfiguration(address: "[::1]:0")
        configuration.idleTimeout = .seconds(5)
        let server = HTTPServer(configuration: configuration, handler: TestServer.echo)
        let port = try server.start()
        defer { server.shutdown() }
        #expect(server.localAddress == "[::1]:\(port)")
        let client = try RawHTTPClient(host: "::1", port: port)
        try client.send(RawHTTPClient.request("GET", "/v6"))
        #expect(try client.readResponse().bodyText == "GET /v6 ")
    }

    @Test func invalidAddressAndBusyPortAreTypedErrors() throws {
        #expect(throws: HTTPServerError.self) {
            try HTTPServer(configuration: .init(address: "no-port"), handler: TestServer.echo).start()
        }
        let server = try TestServer()
        defer { server.stop() }
        let error = try #require(throws: HTTPServerError.self) {
            try HTTPServer(configuration: .init(address: "127.0.0.1:\(server.port)"), handler: TestServer.echo).start()
        }
        #expect(error.code == .bindFailed)
    }

    @Test func droppedResponderAnswers500() throws {
        let server = try TestServer(handler: { _, _ in })
        defer { server.stop() }
        let client = try server.client()
        try client.send(RawHTTPClient.request("GET", "/forgotten"))
        let response = try client.readResponse()
        #expect(response.status == 500 && response.bodyText.contains("\"internal\""))
    }
}
