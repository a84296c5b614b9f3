import Foundation
import StoreRelayNet
import StoreRelayCore
import Testing

/// The client against a real loopback HTTP server.
@Suite struct PlainHTTPTests {
    @Test func contentLengthChunkedAndReadUntilClose() async throws {
        let server = try TestHTTPServer { connection in
            while let request = connection.readRequest() {
                switch request.target {
                case "/length": connection.write(ok("fixed"))
                case "/chunked": connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nchu\r\n4\r\nnked\r\n0\r\n\r\n")
                default:
                    connection.write("HTTP/1.1 200 OK\r\nX-Mode: close\r\n\r\nuntil close")
                    return
                }
            }
        }
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        #expect(try await fetch(client, "http://127.0.0.1:\(server.port)/length").bodyText == "fixed")
        #expect(try await fetch(client, "http://127.0.0.1:\(server.port)/chunked").bodyText == "chunked")
        let close = try await fetch(client, "http://127.0.0.1:\(server.port)/close")
        #expect(close.bodyText == "until close")
        #expect(close.response?.headers["x-mode"] == "close")
        #expect(server.acceptedCount == 1)
    }

    @Test func postBodyAndHeadersReachTheServerInOrder() async throws {
        let seen = Locked<TestRequest?>(nil)
        let server = try TestHTTPServer(handler: serveEach { request in
            seen.withLock { $0 = request }
            return ok(String(decoding: request.body, as: UTF8.self).uppercased())
        })
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let request = try HTTPClientRequest(
            method: "POST", url: "http://localhost:\(server.port)/hook?x=1",
            headers: ["Content-Type": "application/json", "webhook-id": "abc"], body: Array("{\"a\":1}".utf8))
        let result = await fetch(client, request)
        #expect(result.bodyText == "{\"A\":1}", "\(result)")
        let received = try #require(seen.current)
        #expect(received.method == "POST" && received.target == "/hook?x=1")
        #expect(received.headers["host"] == "localhost:\(server.port)" && received.headers["webhook-id"] == "abc")
        #expect(received.headers["content-length"] == "7")
    }

    @Test func keepAliveReusesOneConnection() async throws {
        let server = try TestHTTPServer(handler: serveEach { _ in ok("again") })
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        for _ in 0..<5 {
            #expect(try await fetch(client, "http://127.0.0.1:\(server.port)/").bodyText == "again")
        }
        #expect(server.acceptedCount == 1)
    }

    @Test func serverClosingAnIdleConnectionIsNoticedAndTheNextRequestSucceeds() async throws {
        let closed = Locked(0)
        let server = try TestHTTPServer { connection in
            if connection.readRequest() != nil { connection.write(ok("once")) }
            connection.close()
            closed.withLock { $0 += 1 }
        }
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        #expect(try await fetch(client, "http://127.0.0.1:\(server.port)/").bodyText == "once")
        #expect(await eventually { closed.current == 1 })
        #expect(try await fetch(client, "http://127.0.0.1:\(server.port)/").bodyText == "once")
        #expect(server.acceptedCount == 2)
    }

    @Test func aPooledConnectionResetByTheServerIsReplacedWithoutAnError() async throws {
        let resets = Locked(0)
        let server = try TestHTTPServer { connection in
            if connection.readRequest() != nil { connection.write(ok("reset after")) }
            connection.reset()
            resets.withLock { $0 += 1 }
        }
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        for round in 1...5 {
            let result = try await fetch(client, "http://127.0.0.1:\(server.port)/")
            #expect(result.bodyText == "reset after", "\(result)")
            #expect(await eventually { resets.current == round })
        }
        #expect(server.acceptedCount == 5)
    }

    @Test func aResetAfterTheRequestWasSentIsAnIOErrorAndNotRetried() async throws {
        let server = try TestHTTPServer { connection in
            _ = connection.readRequest()
            connection.reset()
        }
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let result = try await fetch(client, "http://127.0.0.1:\(server.port)/")
        #expect(result.error?.code == .io, "\(result)")
        #expect(server.acceptedCount == 1)
    }

    @Test func idleConnectionsAreDroppedAfterTheIdleTimeout() async throws {
        let closedByClient = Locked(0)
        let server = try TestHTTPServer { connection in
            while let _ = connection.readRequest() { connection.write(ok("x")) }
            closedByClient.withLock { $0 += 1 }
        }
        defer { server.stop() }
        let client = makeClient { $0.idleTimeout = .milliseconds(100) }
        defer { client.shutdown() }
        #expect(try await fetch(client, "http://127.0.0.1:\(server.port)/").bodyText == "x")
        #expect(await eventually { closedByClient.current == 1 })
        #expect(try await fetch(client, "http://127.0.0.1:\(server.port)/").bodyText == "x")
        #expect(server.acceptedCount == 2)
    }

    @Test func connectionRefusedIsAConnectErrorNotATimeout() async throws {
        let client = makeClient()
        defer { client.shutdown() }
        let result = try await fetch(client, "http://127.0.0.1:\(closedPort())/", timeout: .seconds(30))
        #expect(result.error?.code == .connect, "\(result)")
        #expect(result.error?.errno == ECONNREFUSED)
    }

    @Test func aServerThatNeverAnswersTimesOut() async throws {
        let server = try TestHTTPServer { connection in
            _ = connection.readRequest()
            _ = connection.readRequest()  // blocks until the client gives up
        }
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let result = try await fetch(client, "http://127.0.0.1:\(server.port)/", timeout: .milliseconds(300))
        #expect(result.error?.code == .timeout, "\(result)")
    }

    @Test func slowHeadersTimeOutButSlowWithinTheBudgetSucceeds() async throws {
        let server = try TestHTTPServer { connection in
            while let request = connection.readRequest() {
                let pieces = Array(ok("slow").utf8)
                let pause: UInt32 = request.target == "/trickle" ? 100_000 : 10_000
                for byte in pieces.prefix(20) {  // the head arrives byte by byte
                    connection.write([byte])
                    usleep(pause)
                }
                connection.write(Array(pieces.dropFirst(20)))
            }
        }
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let fine = try await fetch(client, "http://127.0.0.1:\(server.port)/quick", timeout: .seconds(10))
        #expect(fine.bodyText == "slow", "\(fine)")
        let slow = try await fetch(client, "http://127.0.0.1:\(server.port)/trickle", timeout: .milliseconds(300))
        #expect(slow.error?.code == .timeout, "\(slow)")
    }

    @Test func malformedStatusLineIsAProtocolError() async throws {
        let server = try TestHTTPServer(handler: serveEach { _ in "HTTP/1.1 OK 200\r\n\r\n" })
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let result = try await fetch(client, "http://127.0.0.1:\(server.port)/")
        #expect(result.error?.code == .protocol, "\(result)")
    }

    @Test func bodiesOverTheCapFail() async throws {
        let server = try TestHTTPServer { connection in
            while let request = connection.readRequest() {
                let big = String(repeating: "z", count: 5000)
                if request.target == "/chunked" {
                    connection.write("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
                    for _ in 0..<10 { connection.write("1f4\r\n" + String(repeating: "z", count: 500) + "\r\n") }
                    connection.write("0\r\n\r\n")
                } else {
                    connection.write(ok(big))
                }
            }
        }
        defer { server.stop() }
        let client = makeClient { $0.maxResponseBodySize = 1000 }
        defer { client.shutdown() }
        let fixed = try await fetch(client, "http://127.0.0.1:\(server.port)/fixed")
        #expect(fixed.error?.code == .responseTooLarge, "\(fixed)")
        let chunked = try await fetch(client, "http://127.0.0.1:\(server.port)/chunked")
        #expect(chunked.error?.code == .responseTooLarge, "\(chunked)")
    }

    @Test func shutdownFailsRequestsInFlightAndLaterOnes() async throws {
        let server = try TestHTTPServer { connection in
            _ = connection.readRequest()
            _ = connection.readRequest()
        }
        defer { server.stop() }
        let client = makeClient()
        let request = try HTTPClientRequest(url: "http://127.0.0.1:\(server.port)/")
        async let pending = fetch(client, request, timeout: .seconds(30))
        #expect(await eventually { server.acceptedCount == 1 })
        client.shutdown()
        #expect(await pending.error?.code == .shutdown)
        #expect(await fetch(client, request).error?.code == .shutdown)
    }
}
