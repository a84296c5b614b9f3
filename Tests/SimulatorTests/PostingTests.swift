import Dispatch
import Foundation
import StoreRelayCore
import StoreRelaySimulator
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct PostingTests {
    /// What `start` passes to its completion, waited for.
    func waitFor<Answer: Sendable>(_ start: (@escaping @Sendable (Answer) -> Void) -> Void) -> Answer {
        let answer = Locked<Answer?>(nil)
        let done = DispatchSemaphore(value: 0)
        start { value in
            answer.withLock { $0 = value }
            done.signal()
        }
        done.wait()
        return answer.current!
    }

    @Test func parsesTargets() throws {
        let plain = try NotificationPoster.target("http://127.0.0.1:8080/appstore/notifications")
        #expect(plain.host == "127.0.0.1" && plain.port == 8080 && plain.pathAndQuery == "/appstore/notifications")
        let bare = try NotificationPoster.target("http://localhost")
        #expect(bare.port == 80 && bare.pathAndQuery == "/")
        let v6 = try NotificationPoster.target("http://[::1]:9000/x?y=1")
        #expect(v6.host == "::1" && v6.port == 9000 && v6.pathAndQuery == "/x?y=1")
        let tls = try NotificationPoster.target("https://gateway.example.com/appstore")
        #expect(tls.scheme == .https && tls.port == 443)
        for bad in ["ftp://x/", "http://:80/", "http://host:0/", "http://host:99999/", "http://u:p@host/", "127.0.0.1:8080", "http://h/#frag"] {
            let error = #expect(throws: SimulatorError.self, "\(bad)") { try NotificationPoster.target(bad) }
            #expect(error?.code == .invalidOption)
        }
    }

    @Test func postsLikeAppleAndReportsTheAnswer() throws {
        for (status, reason) in [(200, "OK"), (401, "Unauthorized")] {
            let body = "{\"status\":\"accepted\"}"
            let server = try OneShotServer(
                answer: "HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
            let target = try NotificationPoster.target("http://127.0.0.1:\(server.port)/appstore/notifications")
            let answer = try waitFor { NotificationPoster(timeout: .seconds(10)).post("{\"signedPayload\":\"a.b.c\"}", to: target, completion: $0) }.get()
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
        let target = try NotificationPoster.target("http://127.0.0.1:\(port)/")
        let error = #expect(throws: SimulatorError.self) {
            try waitFor { NotificationPoster(timeout: .seconds(5)).post("{}", to: target, completion: $0) }.get()
        }
        #expect(error?.code == .delivery)
        #expect(error?.isUsageError == false)
    }
}

