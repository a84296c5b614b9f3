import Testing
import StoreRelayNet
import StoreRelayCore

@Suite struct ResponseTests {
    private func text(_ response: HTTPResponse, head: Bool = false, close: Bool = false, version: HTTPVersion = .http1_1) -> String {
        var bytes: [UInt8] = []
        response.serialize(into: &bytes, headRequest: head, close: close, requestVersion: version,
                           date: "Sun, 06 Nov 1994 08:49:37 GMT")
        return String(decoding: bytes, as: UTF8.self)
    }

    @Test func framingIsAlwaysTheServersOwn() {
        let response = HTTPResponse(
            status: 200, headers: ["Content-Length": "999", "Transfer-Encoding": "chunked", "X-A": "1"], body: Array("hi".utf8))
        #expect(text(response) == "HTTP/1.1 200 OK\r\nX-A: 1\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\nContent-Length: 2\r\n\r\nhi")
        #expect(text(response, close: true).contains("\r\nConnection: close\r\n"))
        #expect(text(response, version: .http1_0).contains("\r\nConnection: keep-alive\r\n"))
    }

    @Test func headKeepsContentLengthWithoutBody() {
        let serialized = text(HTTPResponse(status: 200, body: Array("hello".utf8)), head: true)
        #expect(serialized.hasSuffix("Content-Length: 5\r\n\r\n"))
    }

    @Test func noContentHasNoLength() {
        #expect(!text(HTTPResponse(status: 204)).contains("Content-Length"))
    }

    @Test func headerInjectionIsDropped() {
        let response = HTTPResponse(status: 200, headers: ["X-Evil": "a\r\nSet-Cookie: x", "Bad Name": "v"])
        let serialized = text(response)
        #expect(!serialized.contains("Set-Cookie") && !serialized.contains("Bad Name"))
    }

    @Test func jsonErrorBody() {
        let response = HTTPResponse.error(.unavailable, message: "Journal \"full\".")
        #expect(response.status == 503)
        #expect(response.headers["content-type"] == "application/json")
        #expect(String(decoding: response.body, as: UTF8.self) == "{\"error\":\"unavailable\",\"message\":\"Journal \\\"full\\\".\"}")
    }

    @Test func headersLookupIgnoresCaseAndKeepsOrder() {
        var headers: HTTPHeaders = ["A": "1", "b": "2", "a": "3"]
        #expect(headers["a"] == "1" && headers.values(for: "A") == ["1", "3"])
        headers.replaceOrAdd(name: "A", value: "x")
        #expect(headers.map(\.name) == ["A", "b"] && headers["a"] == "x")
        headers.remove(name: "B")
        #expect(headers.count == 1)
    }

    @Test func responderAnswersOnceAndDefaultsTo500WhenDropped() {
        let received = Locked<[Int]>([])
        do {
            let responder = HTTPResponder { response in received.withLock { $0.append(response.status) } }
            #expect(responder.respond(HTTPResponse(status: 201)))
            #expect(!responder.respond(HTTPResponse(status: 202)))
        }
        do {
            _ = HTTPResponder { response in received.withLock { $0.append(response.status) } }
        }
        #expect(received.current == [201, 500])
    }

    @Test func routerWithoutSockets() {
        var router = HTTPRouter()
        router.get("/a") { _, responder in responder.respond(HTTPResponse(status: 200)) }
        let routes = router.freeze()
        let statuses = Locked<[Int]>([])
        for (method, path) in [("GET", "/a"), ("HEAD", "/a"), ("POST", "/a"), ("GET", "/b")] {
            routes.handle(HTTPRequest(method: method, target: path), HTTPResponder { response in
                statuses.withLock { $0.append(response.status) }
            })
        }
        #expect(statuses.current == [200, 200, 405, 404])
        #expect(routes.allowedMethods(for: "/a") == ["GET", "HEAD"])
    }
}
