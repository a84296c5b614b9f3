import Dispatch
import Testing
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct ServerPipeliningTests {
    /// Three requests in one write; the handlers hold their responders until all three have
    /// arrived, then answer in reverse order, each after an async delay. Answers must still
    /// go out in request order.
    @Test func answersFollowRequestOrderWhateverOrderHandlersFinish() throws {
        let held = Locked<[(String, HTTPResponder)]>([])
        let answered = Locked<[String]>([])
        let server = try TestServer(handler: { request, responder in
            let all = held.withLock { list -> [(String, HTTPResponder)]? in
                list.append((request.path, responder))
                return list.count == 3 ? list : nil
            }
            guard let all else { return }
            for (offset, (path, responder)) in all.reversed().enumerated() {
                DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(30 * (offset + 1))) {
                    answered.withLock { $0.append(path) }
                    responder.respond(.json("{\"path\":\"\(path)\"}"))
                }
            }
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send(
            RawHTTPClient.request("GET", "/1") + RawHTTPClient.request("POST", "/2", body: "two")
                + RawHTTPClient.request("GET", "/3"))
        let bodies = try (0..<3).map { _ in try client.readResponse().bodyText }
        #expect(bodies == ["{\"path\":\"/1\"}", "{\"path\":\"/2\"}", "{\"path\":\"/3\"}"])
        #expect(answered.current == ["/3", "/2", "/1"])
    }

    /// More pipelined requests than `maxPipelinedRequests`: reading pauses, nothing is lost.
    @Test func deepPipelineIsServedInOrder() throws {
        let server = try TestServer({ $0.maxPipelinedRequests = 2 }, handler: { request, responder in
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(2)) {
                responder.respond(HTTPResponse(status: 200, contentType: "text/plain", body: request.path))
            }
        })
        defer { server.stop() }
        let client = try server.client()
        try client.send((0..<20).map { RawHTTPClient.request("GET", "/\($0)") }.joined())
        let paths = try (0..<20).map { _ in try client.readResponse().bodyText }
        #expect(paths == (0..<20).map { "/\($0)" })
    }
}
