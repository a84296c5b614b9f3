import Dispatch
@testable import StoreRelayNet
import Testing

/// The rules of one client connection (exchange, keep-alive, retry, deadlines), event by event,
/// without a socket.
@Suite struct ClientConnectionStateMachineTests {
    private let start = DispatchTime(uptimeNanoseconds: 1_000_000_000)
    private let settings = ClientConnectionStateMachine.Settings(
        origin: "http://example.test:80", connectTimeout: .seconds(10), idleTimeout: .seconds(60),
        limits: .init(maxHeaderBytes: 1024, maxBodyBytes: 64))

    /// What an action says, in a form tests compare.
    private enum Seen: Equatable {
        case none, close, closeIdle, retry
        case deadline(DispatchTime)
        case complete(status: Int, body: String, idleUntil: DispatchTime?)
        case fail(HTTPClientError.Code, String)
    }

    private func seen(_ action: ClientConnectionStateMachine.Action) -> Seen {
        switch action {
        case .none: .none
        case .setDeadline(let time): .deadline(time)
        case .complete(let response, let idleUntil):
            .complete(status: response.status, body: String(decoding: response.body, as: UTF8.self), idleUntil: idleUntil)
        case .fail(let error): .fail(error.code, error.message)
        case .retryOnFreshConnection: .retry
        case .closeIdle: .closeIdle
        case .close: .close
        }
    }

    /// A connection that got through connecting; its first request is out.
    private func exchanging(isHead: Bool = false) -> ClientConnectionStateMachine {
        var machine = ClientConnectionStateMachine(settings)
        machine.expectResponse(isHeadRequest: isHead)
        _ = machine.resolved(now: start)
        _ = machine.established()
        return machine
    }

    /// A connection back in the pool after one exchange.
    private func idle() -> ClientConnectionStateMachine {
        var machine = exchanging()
        _ = machine.received(Array("HTTP/1.1 204 No Content\r\n\r\n".utf8), outputFlushed: true, now: start)
        return machine
    }

    @Test func theConnectTimeoutRunsFromResolutionToEstablished() {
        var machine = ClientConnectionStateMachine(settings)
        let armed = seen(machine.resolved(now: start))
        #expect(armed == .deadline(start.advanced(by: .seconds(10))))
        let disarmed = seen(machine.established())
        #expect(disarmed == .deadline(.distantFuture) && machine.state == .exchanging)
        let late = seen(machine.deadlinePassed())
        #expect(late == .none, "after the handshake the request's own timeout bounds it")

        var slow = ClientConnectionStateMachine(settings)
        _ = slow.resolved(now: start)
        let timedOut = seen(slow.deadlinePassed())
        guard case .fail(.connectTimeout, let message) = timedOut else { Issue.record("\(timedOut)"); return }
        #expect(message.hasPrefix("no connection to http://example.test:80 within") && slow.state == .closed, "\(message)")
    }

    /// Every split of a keep-alive response gives the same result, at its last byte only.
    @Test func aResponseCompletesInEveryChunking() {
        let wire = Array("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello".utf8)
        let expected = Seen.complete(status: 200, body: "hello", idleUntil: start.advanced(by: .seconds(60)))
        for split in 1..<wire.count {
            var machine = exchanging()
            let first = seen(machine.received(wire[..<split], outputFlushed: true, now: start))
            let second = seen(machine.received(wire[split...], outputFlushed: true, now: start))
            #expect(first == .none && second == expected, "split at \(split)")
            #expect(machine.state == .idle && machine.wasReused)
        }
        var whole = exchanging()
        let atOnce = seen(whole.received(wire, outputFlushed: true, now: start))
        #expect(atOnce == expected)
        var byteByByte = exchanging()
        var outcomes: [Seen] = []
        for byte in wire { outcomes.append(seen(byteByByte.received([byte], outputFlushed: true, now: start))) }
        #expect(outcomes.dropLast().allSatisfy { $0 == .none })
        #expect(outcomes.last == .complete(status: 200, body: "hello", idleUntil: start.advanced(by: .seconds(60))))
    }

    @Test func aConnectionIsKeptOnlyWhenTheResponseAllowsIt() {
        var closing = exchanging()
        let closed = seen(closing.received(Array("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8),
                                           outputFlushed: true, now: start))
        #expect(closed == .complete(status: 200, body: "", idleUntil: nil) && closing.state == .closed)

        var early = exchanging()
        let answeredEarly = seen(early.received(Array("HTTP/1.1 413 Too Large\r\nContent-Length: 0\r\n\r\n".utf8),
                                                outputFlushed: false, now: start))
        #expect(answeredEarly == .complete(status: 413, body: "", idleUntil: nil), "the request's rest is still unsent")

        var untilClose = exchanging()
        let partial = seen(untilClose.received(Array("HTTP/1.0 200 OK\r\n\r\nstream".utf8), outputFlushed: true, now: start))
        #expect(partial == .none)
        let ended = seen(untilClose.inputEnded(requestBytesSent: true))
        #expect(ended == .complete(status: 200, body: "stream", idleUntil: nil))
    }

    @Test func aHeadResponseHasNoBodyWhateverItsLength() {
        var machine = exchanging(isHead: true)
        let done = seen(machine.received(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".utf8), outputFlushed: true, now: start))
        #expect(done == .complete(status: 200, body: "", idleUntil: start.advanced(by: .seconds(60))))
    }

    @Test func badResponsesFailWithTheCodecsVerdict() {
        var malformed = exchanging()
        let bad = seen(malformed.received(Array("HTTP/9 200 OK\r\n\r\n".utf8), outputFlushed: true, now: start))
        guard case .fail(.protocol, _) = bad else { Issue.record("\(bad)"); return }
        #expect(malformed.state == .closed)

        var large = exchanging()
        let tooLarge = seen(large.received(Array("HTTP/1.1 200 OK\r\nContent-Length: 65\r\n\r\n".utf8), outputFlushed: true, now: start))
        guard case .fail(.responseTooLarge, _) = tooLarge else { Issue.record("\(tooLarge)"); return }

        var cut = exchanging()
        _ = cut.received(Array("HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nabc".utf8), outputFlushed: true, now: start)
        let truncated = seen(cut.inputEnded(requestBytesSent: true))
        guard case .fail(.io, let message) = truncated else { Issue.record("\(truncated)"); return }
        #expect(message.hasPrefix("http://example.test:80: "), "\(message)")
    }

    /// A pooled connection the server closed before it saw any of the request is worth one
    /// more try on a fresh connection; a fresh one, or one that sent bytes, is not.
    @Test func onlyAStaleReusedConnectionIsRetried() {
        var stale = idle()
        _ = stale.reuse(isHeadRequest: false)
        let retried = seen(stale.inputEnded(requestBytesSent: false))
        #expect(retried == .retry && stale.state == .closed)

        var reset = idle()
        _ = reset.reuse(isHeadRequest: false)
        let resetRetried = seen(reset.failed(OutboundError(.io, "error reading from x: reset", errno: 104), requestBytesSent: false))
        #expect(resetRetried == .retry)

        var sent = idle()
        _ = sent.reuse(isHeadRequest: false)
        let notRetried = seen(sent.inputEnded(requestBytesSent: true))
        guard case .fail(.io, _) = notRetried else { Issue.record("\(notRetried)"); return }

        var fresh = exchanging()
        let freshFailed = seen(fresh.inputEnded(requestBytesSent: false))
        guard case .fail(.io, _) = freshFailed else { Issue.record("\(freshFailed)"); return }
    }

    @Test func anIdleConnectionClosesOnAnythingButSilence() {
        var spoken = idle()
        let stray = seen(spoken.received(Array("x".utf8), outputFlushed: true, now: start))
        #expect(stray == .closeIdle && spoken.state == .closed)
        var ended = idle()
        let closed = seen(ended.inputEnded(requestBytesSent: false))
        #expect(closed == .closeIdle)
        var broken = idle()
        let failed = seen(broken.failed(OutboundError(.io, "reset", errno: 104), requestBytesSent: false))
        #expect(failed == .closeIdle)
        var unused = idle()
        let expired = seen(unused.deadlinePassed())
        #expect(expired == .closeIdle)
        var reused = idle()
        let taken = seen(reused.reuse(isHeadRequest: false))
        #expect(taken == .deadline(.distantFuture) && reused.state == .exchanging)
    }

    @Test func driverFailuresBecomeTheClientsCodes() {
        struct Unknown: Error, CustomStringConvertible { var description: String { "no such name" } }
        let cases: [(OutboundError, HTTPClientError.Code, String)] = [
            (OutboundError(.resolution, "cannot resolve a: no such name", resolverError: Unknown()), .resolution, "no such name"),
            (OutboundError(.resolution, "x", resolverError: HTTPClientError(.resolution, "own words")), .resolution, "own words"),
            (OutboundError(.connect, "cannot connect to o: refused", errno: 111), .connect, "cannot connect to o: refused"),
            (OutboundError(.tlsSetup, "TLS setup for o failed: bad file"), .tls, "TLS setup for o failed: bad file"),
            (OutboundError(.handshake, "o closed the connection during the TLS handshake", endOfStream: true), .tls,
             "o closed the connection during the TLS handshake"),
            (OutboundError(.handshake, "error reading from o: reset", errno: 104), .tls, "error reading from o: reset"),
            (OutboundError(.io, "TLS error with o: bad record", tlsReason: "bad record"), .tls, "TLS error with o: bad record"),
            (OutboundError(.io, "error sending to o: broken pipe", errno: 32, whileSending: true), .io, "error sending to o: broken pipe"),
        ]
        for (driver, code, message) in cases {
            var machine = ClientConnectionStateMachine(settings)
            let failed = seen(machine.failed(driver, requestBytesSent: false))
            #expect(failed == .fail(code, message), "\(driver)")
        }
        #expect(HTTPClientError(OutboundError(.io, "error reading from o: reset", errno: 104)).errno == 104)
    }
}
