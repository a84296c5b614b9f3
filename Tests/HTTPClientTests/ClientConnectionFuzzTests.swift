import Dispatch
@testable import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The client connection's rules under random responses cut into random pieces, and under
/// mutated bytes: a response completes with its own body whatever the chunking, the machine
/// never traps, and an exchange ends once (complete or fail), never twice. Seeded, so a
/// failure replays; `Fuzz/` fuzzes the response parser under it (FuzzHTTPResponse) for longer.
@Suite struct ClientConnectionFuzzTests {
    private let now = DispatchTime(uptimeNanoseconds: 1_000_000_000)
    private let settings = ClientConnectionStateMachine.Settings(
        origin: "http://fuzz.test:80", connectTimeout: .seconds(10), idleTimeout: .seconds(60),
        limits: .init(maxHeaderBytes: 4096, maxBodyBytes: 4096))

    private func exchanging() -> ClientConnectionStateMachine {
        var machine = ClientConnectionStateMachine(settings)
        _ = machine.resolved(now: now)
        _ = machine.established()
        return machine
    }

    /// A random response and the body it carries: Content-Length, chunked, or until close.
    private func response(_ random: inout SeededGenerator) -> (wire: [UInt8], body: [UInt8], untilClose: Bool) {
        let body = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
        let status = [200, 201, 202, 400, 404, 429, 500, 503].randomElement(using: &random)!
        var head = "HTTP/1.1 \(status) Whatever\r\nX-Seed: \(Int.random(in: 0...999, using: &random))\r\n"
        switch Int.random(in: 0..<3, using: &random) {
        case 0:
            head += "Content-Length: \(body.count)\r\n\r\n"
            return (Array(head.utf8) + body, body, false)
        case 1:
            head += "Transfer-Encoding: chunked\r\n\r\n"
            var wire = Array(head.utf8)
            var rest = body[...]
            while !rest.isEmpty {
                let size = min(rest.count, Int.random(in: 1...64, using: &random))
                wire += Array("\(String(size, radix: 16))\r\n".utf8) + rest.prefix(size) + [13, 10]
                rest = rest.dropFirst(size)
            }
            return (wire + Array("0\r\n\r\n".utf8), body, false)
        default:
            head += "Connection: close\r\n\r\n"
            return (Array(head.utf8) + body, body, true)
        }
    }

    private func pieces(_ bytes: [UInt8], _ random: inout SeededGenerator) -> [ArraySlice<UInt8>] {
        let cuts = (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: 0...bytes.count, using: &random) }.sorted()
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        for cut in cuts + [bytes.count] where cut > start {
            pieces.append(bytes[start..<cut])
            start = cut
        }
        return pieces
    }

    @Test func randomResponsesInRandomPiecesCompleteWithTheirBodies() {
        var random = SeededGenerator(seed: 0xC11E_0000_0000_0001)
        for _ in 0..<500 {
            let (wire, body, untilClose) = response(&random)
            var machine = exchanging()
            var completed: [[UInt8]] = []
            for piece in pieces(wire, &random) {
                if case .complete(let response, _) = machine.received(piece, outputFlushed: true, now: now) { completed.append(response.body) }
            }
            if untilClose, case .complete(let response, _) = machine.inputEnded(requestBytesSent: true) { completed.append(response.body) }
            #expect(completed == [body])
        }
    }

    @Test func mutatedResponsesNeverTrapAndEndTheExchangeOnce() {
        var random = SeededGenerator(seed: 0xC11E_0000_0000_0002)
        var failures = 0
        for _ in 0..<3_000 {
            var wire = response(&random).wire
            for _ in 0..<Int.random(in: 1...3, using: &random) where !wire.isEmpty {
                let at = Int.random(in: 0..<wire.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: wire[at] = UInt8.random(in: 0...255, using: &random)
                case 1: wire.remove(at: at)
                default: wire.insert(contentsOf: wire[at..<min(wire.count, at + 8)], at: at)
                }
            }
            var machine = exchanging()
            var endings: [String] = []
            for piece in pieces(wire, &random) {
                switch machine.received(piece, outputFlushed: true, now: now) {
                case .complete: endings.append("complete")
                case .fail: endings.append("fail")
                case .none, .closeIdle: break
                case let other: Issue.record("unexpected \(other)")
                }
            }
            switch machine.inputEnded(requestBytesSent: true) {
            case .complete: endings.append("complete")
            case .fail: endings.append("fail")
            default: break
            }
            #expect(endings.count == 1, "one ending per exchange: \(endings)")
            if endings == ["fail"] { failures += 1 }
        }
        #expect(failures > 100, "the mutations reach the failing paths (\(failures))")
    }
}
