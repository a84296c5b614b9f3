import Foundation
import StoreRelaySimulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct PostingTests {
    @Test func parsesTargets() throws {
        let plain = try PostTarget(url: "http://127.0.0.1:8080/appstore/notifications")
        #expect(plain.host == "127.0.0.1" && plain.port == 8080 && plain.path == "/appstore/notifications")
        let bare = try PostTarget(url: "http://localhost")
        #expect(bare.port == 80 && bare.path == "/")
        let v6 = try PostTarget(url: "http://[::1]:9000/x?y=1#frag")
        #expect(v6.host == "::1" && v6.port == 9000 && v6.path == "/x?y=1")
        for bad in ["https://example.com/", "ftp://x/", "http://:80/", "http://host:0/", "http://host:99999/", "http://u:p@host/"] {
            let error = #expect(throws: SimulatorError.self, "\(bad)") { try PostTarget(url: bad) }
            #expect(error?.code == .invalidOption)
        }
    }

    @Test func parsesAnswersInEveryFraming() throws {
        let length = try HTTPAnswer.parse(Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8))
        #expect(length == HTTPAnswer.parseExpect(200, "OK", "hello"))
        let chunked = try HTTPAnswer.parse(Array("HTTP/1.1 401 Unauthorized\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\n{\"a\"\r\n2\r\n:1\r\n1\r\n}\r\n0\r\n\r\n".utf8))
        #expect(chunked == HTTPAnswer.parseExpect(401, "Unauthorized", "{\"a\":1}"))
        let closed = try HTTPAnswer.parse(Array("HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\nlater".utf8))
        #expect(closed.body == "later" && !closed.isSuccess)
        let interim = try HTTPAnswer.parse(Array("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".utf8))
        #expect(interim.status == 202 && interim.isSuccess)
        for broken in ["HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nshort", "HTTP/1.1 200 OK\r\n", "garbage\r\n\r\n",
                       "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n"] {
            #expect(throws: SimulatorError.self, "\(broken)") { try HTTPAnswer.parse(Array(broken.utf8)) }
        }
    }

    @Test func postsLikeAppleAndReportsTheAnswer() throws {
        for (status, reason) in [(200, "OK"), (401, "Unauthorized")] {
            let body = "{\"status\":\"accepted\"}"
            let server = try OneShotServer(
                answer: "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            let target = try PostTarget(url: "http://127.0.0.1:\(server.port)/appstore/notifications")
            let answer = try NotificationPoster(timeoutSeconds: 10).post("{\"signedPayload\":\"a.b.c\"}", to: target)
            let request = try server.request()
            #expect(answer.status == status)
            #expect(answer.isSuccess == (status == 200))
            #expect(answer.body == body)
            #expect(request.hasPrefix("POST /appstore/notifications HTTP/1.1\r\n"))
            #expect(request.contains("\r\nHost: 127.0.0.1:\(server.port)\r\n"))
            #expect(request.contains("\r\nContent-Type: application/json\r\n"))
            #expect(request.contains("\r\nContent-Length: 25\r\n"))
            #expect(request.hasSuffix("\r\n\r\n{\"signedPayload\":\"a.b.c\"}"))
        }
    }

    @Test func refusedConnectionIsADeliveryError() throws {
        // Bind a port, then close it: nothing listens there any more.
        let port = try OneShotServer.unusedPort()
        let target = try PostTarget(url: "http://127.0.0.1:\(port)/")
        let error = #expect(throws: SimulatorError.self) { try NotificationPoster(timeoutSeconds: 5).post("{}", to: target) }
        #expect(error?.code == .delivery)
        #expect(error?.isUsageError == false)
    }
}

extension HTTPAnswer {
    /// An answer built through `parse`, the only public way to make one.
    static func parseExpect(_ status: Int, _ reason: String, _ body: String) -> HTTPAnswer? {
        try? HTTPAnswer.parse(Array("HTTP/1.1 \(status) \(reason)\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8))
    }
}
