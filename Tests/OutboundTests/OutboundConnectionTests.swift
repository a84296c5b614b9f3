import Dispatch
import Foundation
import StoreRelayCore
@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The outbound driver over real loopback sockets: resolution through the injected resolver,
/// dialing each address in turn, buffered writes, the read loop, the deadline and the end.
@Suite struct OutboundConnectionTests {
    @Test func bytesWrittenBeforeTheConnectionWaitForItAndComeBack() throws {
        let peer = try LoopbackPeer(serve: LoopbackPeer.echo)
        defer { peer.stop() }
        let recorder = DriverRecorder(OutboundEndpoint(host: "127.0.0.1", port: peer.port))
        recorder.open(writing: "hello")
        #expect(pollUntil(timeout: 10) { recorder.text == "hello" }, "\(recorder.text)")
        #expect(recorder.heard.current == [.resolved, .established, .received])
        #expect(recorder.queue.sync { recorder.connection.sentByteCount == 5 && recorder.connection.isOutputFlushed })
        recorder.run { $0.write(Array(" again".utf8)) }
        #expect(pollUntil(timeout: 10) { recorder.text == "hello again" })

        recorder.run { $0.close() }
        #expect(pollUntil(timeout: 10) { recorder.isInPhase(.closed) })
        recorder.run { $0.write(Array("ignored".utf8)) }
        Thread.sleep(forTimeInterval: 0.05)
        #expect(recorder.heard.current == [.resolved, .established, .received], "nothing follows close")
    }

    /// More than the socket takes at once: the rest waits for writability, in order.
    @Test func aLargeWriteGoesOutWholeAndInOrder() throws {
        let peer = try LoopbackPeer(serve: LoopbackPeer.echo)
        defer { peer.stop() }
        let recorder = DriverRecorder(OutboundEndpoint(host: "127.0.0.1", port: peer.port))
        let payload = (0..<(4 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) }
        recorder.run { connection in
            connection.open()
            connection.write(payload)
        }
        #expect(pollUntil(timeout: 30) { recorder.bytes.current.count >= payload.count })
        #expect(recorder.bytes.current == payload)
        recorder.run { $0.close() }
    }

    @Test func everyResolvedAddressIsTriedInTurn() throws {
        let peer = try LoopbackPeer(serve: LoopbackPeer.echo)
        defer { peer.stop() }
        let dead = try closedLoopbackPort()
        let resolver = TableResolver(["two.test": [loopback(dead), loopback(peer.port)]])
        let recorder = DriverRecorder(OutboundEndpoint(host: "two.test", port: peer.port), connector: OutboundConnector(resolver: resolver))
        recorder.open(writing: "second")
        #expect(pollUntil(timeout: 10) { recorder.text == "second" })
        #expect(resolver.asked.current == ["two.test"] && peer.accepted.current == 1)
        recorder.run { $0.close() }
    }

    @Test func whenEveryAddressFailsEachReasonIsGiven() throws {
        let (first, second) = (try closedLoopbackPort(), try closedLoopbackPort())
        let resolver = TableResolver(["dead.test": [loopback(first), loopback(second)]])
        let recorder = DriverRecorder(OutboundEndpoint(host: "dead.test", port: 1), connector: OutboundConnector(resolver: resolver))
        recorder.open(writing: "never sent")
        #expect(pollUntil(timeout: 10) { recorder.failure.current != nil })
        let failure = try #require(recorder.failure.current)
        #expect(failure.code == .connect && failure.errno == ECONNREFUSED)
        #expect(failure.message.hasPrefix("cannot connect to dead.test:1: "), "\(failure.message)")
        #expect(failure.message.contains("127.0.0.1:\(first)") && failure.message.contains("127.0.0.1:\(second)"), "\(failure.message)")
        #expect(recorder.heard.current == [.resolved, .failed(.connect)])
        #expect(recorder.isInPhase(.closed))
    }

    /// The resolver is the one seam: what it throws reaches the client whole, and an IP
    /// literal never asks it.
    @Test func theInjectedResolverIsTheOneSeam() throws {
        let peer = try LoopbackPeer(serve: LoopbackPeer.echo)
        defer { peer.stop() }
        let resolver = TableResolver([:])
        let connector = OutboundConnector(resolver: resolver)
        let missing = DriverRecorder(OutboundEndpoint(host: "nowhere.test", port: 80), connector: connector)
        missing.open()
        #expect(pollUntil(timeout: 10) { missing.failure.current != nil })
        let failure = try #require(missing.failure.current)
        #expect(failure.code == .resolution && (failure.resolverError as? TableResolver.NoSuchHost)?.host == "nowhere.test")
        #expect(failure.message == "cannot resolve nowhere.test: no such host nowhere.test")
        #expect(missing.heard.current == [.failed(.resolution)])

        let literal = DriverRecorder(OutboundEndpoint(host: "127.0.0.1", port: peer.port), connector: connector)
        literal.open(writing: "x")
        #expect(pollUntil(timeout: 10) { literal.text == "x" })
        #expect(resolver.asked.current == ["nowhere.test"])
        literal.run { $0.close() }
    }

    @Test func theDeadlineArrivesOnceAndCanBeMoved() throws {
        let peer = try LoopbackPeer(serve: LoopbackPeer.echo)
        defer { peer.stop() }
        let recorder = DriverRecorder(OutboundEndpoint(host: "127.0.0.1", port: peer.port)) { event, connection in
            if case .established = event { connection.setDeadline(.now() + .milliseconds(30)) }
        }
        recorder.open()
        #expect(pollUntil(timeout: 10) { recorder.heard.current.contains(.deadline) })
        recorder.run { connection in
            connection.setDeadline(.now() + .milliseconds(40))
            connection.setDeadline(.distantFuture)
        }
        Thread.sleep(forTimeInterval: 0.2)
        #expect(recorder.heard.current == [.resolved, .established, .deadline], "a moved deadline does not fire")
        recorder.run { $0.close() }
    }

    /// The peer's bytes, then its close: the client hears both, in that order, and closes.
    @Test func thePeersCloseFollowsItsLastBytes() throws {
        let peer = try LoopbackPeer { fd in LoopbackPeer.sendAll(fd, Array("bye".utf8)[...]) }
        defer { peer.stop() }
        let recorder = DriverRecorder(OutboundEndpoint(host: "127.0.0.1", port: peer.port)) { event, connection in
            if case .inputEnded = event { connection.close() }
        }
        recorder.open()
        #expect(pollUntil(timeout: 10) { recorder.heard.current.last == .inputEnded })
        #expect(recorder.text == "bye" && recorder.heard.current == [.resolved, .established, .received, .inputEnded])
        #expect(pollUntil(timeout: 10) { recorder.isInPhase(.closed) })
    }
}
