import Foundation
@testable import StoreRelayNet
import StoreRelayCore
import Testing

/// A resolver seam: one host name hangs until released, others resolve to loopback at once.
final class GatedResolver: HostResolver {
    let hangingHost: String
    let gate = DispatchSemaphore(value: 0)
    let hanging = Locked(0)

    init(hangingHost: String) {
        self.hangingHost = hangingHost
    }

    func resolve(host: String, port: UInt16) throws(HTTPClientError) -> [SocketAddress] {
        if host == hangingHost {
            hanging.withLock { $0 += 1 }
            _ = gate.wait(timeout: .now() + 20)
            hanging.withLock { $0 -= 1 }
        }
        if host.hasSuffix(".invalid") { throw HTTPClientError(.resolution, "no such host \(host)") }
        return [SocketAddress(ip: "127.0.0.1", port: port)!]
    }
}

@Suite struct ConcurrencyTests {
    @Test func fiftyParallelRequests() async throws {
        let server = try TestHTTPServer(handler: serveEach { request in ok("echo \(request.target)") })
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        let results = await withTaskGroup(of: (Int, String?).self) { group in
            for index in 0..<50 {
                group.addTask {
                    let result = try? await fetch(client, "http://127.0.0.1:\(server.port)/\(index)")
                    return (index, result?.bodyText)
                }
            }
            var collected: [Int: String?] = [:]
            for await (index, body) in group { collected[index] = body }
            return collected
        }
        #expect(results.count == 50)
        for index in 0..<50 { #expect(results[index] == "echo /\(index)") }
        #expect(server.acceptedCount <= 50)
    }

    /// Four webhook destinations on one host with `concurrency 4` each keep 16 requests in
    /// flight to one origin. The default pool must keep that many connections: with fewer,
    /// every round closed the extra ones and opened them again, and under load the churn cut
    /// delivery throughput five-fold.
    @Test func roundsOfSixteenParallelRequestsReuseTheirConnections() async throws {
        let server = try TestHTTPServer(handler: serveEach { request in ok("echo \(request.target)") })
        defer { server.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        for round in 0..<5 {
            let answered = await withTaskGroup(of: Bool.self) { group in
                for index in 0..<16 {
                    group.addTask { (try? await fetch(client, "http://127.0.0.1:\(server.port)/\(round)-\(index)")) != nil }
                }
                var count = 0
                for await ok in group where ok { count += 1 }
                return count
            }
            #expect(answered == 16)
        }
        #expect(server.acceptedCount <= 16, "\(server.acceptedCount) connections for 80 requests")
    }

    @Test func aHangingLookupNeverDelaysAnotherHost() async throws {
        let server = try TestHTTPServer(handler: serveEach { request in ok("from \(request.headers["host"] ?? "")") })
        defer { server.stop() }
        let resolver = GatedResolver(hangingHost: "slow.test")
        let client = makeClient { $0.resolver = resolver }
        defer { client.shutdown() }

        let slowDone = Locked<Result<HTTPClientResponse, HTTPClientError>?>(nil)
        client.execute(try HTTPClientRequest(url: "http://slow.test:\(server.port)/"), timeout: .seconds(30)) { result in
            slowDone.withLock { $0 = result }
        }
        #expect(await eventually { resolver.hanging.current == 1 })

        // While slow.test's lookup hangs, fast.test is resolved, connected and answered.
        let fast = try await fetch(client, "http://fast.test:\(server.port)/")
        #expect(fast.bodyText == "from fast.test:\(server.port)", "\(fast)")
        #expect(resolver.hanging.current == 1 && slowDone.current == nil)

        resolver.gate.signal()
        #expect(await eventually { slowDone.current != nil })
        #expect(slowDone.current?.bodyText == "from slow.test:\(server.port)")
    }

    @Test func resolutionFailureIsAResolutionError() async throws {
        let client = makeClient { $0.resolver = GatedResolver(hangingHost: "none") }
        defer { client.shutdown() }
        let result = try await fetch(client, "http://nowhere.invalid/")
        #expect(result.error?.code == .resolution, "\(result)")
    }

    @Test func eachResolvedAddressIsTriedInTurn() async throws {
        struct TwoAddresses: HostResolver {
            let deadPort: UInt16
            func resolve(host: String, port: UInt16) throws(HTTPClientError) -> [SocketAddress] {
                [SocketAddress(ip: "127.0.0.1", port: deadPort)!, SocketAddress(ip: "127.0.0.1", port: port)!]
            }
        }
        let server = try TestHTTPServer(handler: serveEach { _ in ok("second") })
        defer { server.stop() }
        let client = makeClient { $0.resolver = TwoAddresses(deadPort: closedPort()) }
        defer { client.shutdown() }
        #expect(try await fetch(client, "http://two.test:\(server.port)/").bodyText == "second")
    }
}

/// Fresh connections hear of their responses from their own sources, with no poll behind them:
/// a lost event would hang its request until the timeout and fail here. Registered before
/// `connect`, sources saw the unconnected socket's hang-up and lost their events in 10% to 75%
/// of fresh connections (swift-corelibs-libdispatch #833); `SocketChannel` is made only once
/// the connect has started, for servers that answer and close as for keep-alive ones.
@Suite struct FreshConnectionEventsTests {
    @Test func twoHundredFreshConnectionsAreAllAnswered() async throws {
        let closing = try TestHTTPServer(handler: { connection in
            if connection.readRequest() != nil {
                connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
            }
        })
        defer { closing.stop() }
        let client = makeClient()
        defer { client.shutdown() }
        for index in 0..<100 {
            let result = try await fetch(client, "http://127.0.0.1:\(closing.port)/\(index)", timeout: .seconds(5))
            #expect(result.bodyText == "ok", "request \(index): \(String(describing: result.error))")
        }
        #expect(closing.acceptedCount == 100)

        let keepAlive = try TestHTTPServer(handler: serveEach { _ in ok("ok") })
        defer { keepAlive.stop() }
        for index in 0..<100 {
            let fresh = makeClient()
            let result = try await fetch(fresh, "http://127.0.0.1:\(keepAlive.port)/\(index)", timeout: .seconds(5))
            #expect(result.bodyText == "ok", "fresh client \(index): \(String(describing: result.error))")
            fresh.shutdown()
        }
        #expect(keepAlive.acceptedCount == 100)
    }
}
