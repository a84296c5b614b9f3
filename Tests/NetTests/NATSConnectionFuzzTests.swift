import Dispatch
@testable import StoreRelayNet
import Testing

/// The NATS connection machine under mutated server streams cut into random pieces: it never
/// traps, and every publish hears exactly once (an answer, a timeout, or the failure that
/// ends the connection). Seeded, so a failure replays.
@Suite struct NATSConnectionFuzzTests {
    typealias Machine = NATSConnectionStateMachine<Int>

    static let fragments = [
        "\r\n", "MSG ", "HMSG ", "_INBOX.T.", "1", " 1 ", "PING\r\n", "-ERR 'x'\r\n", "INFO {}\r\n", "{\"stream\":\"S\",\"seq\":1}",
        "NATS/1.0 503\r\n\r\n", "{\"error\":{\"code\":400}}", "99999999", " ", "\"",
    ]

    /// A server's answers to publishes 1...count, in a random order, some repeated.
    static func answers(_ count: Int, _ random: inout SplitMix) -> [UInt8] {
        var text = ""
        for number in (1...count).shuffled(using: &random) {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                let ack = "{\"stream\":\"S\",\"seq\":\(number)}"
                text += "MSG _INBOX.T.\(number) 1 \(ack.utf8.count)\r\n\(ack)\r\n"
            case 1:
                let error = "{\"error\":{\"code\":503,\"description\":\"no\"}}"
                text += "MSG _INBOX.T.\(number) 1 \(error.utf8.count)\r\n\(error)\r\n"
            case 2:
                text += "HMSG _INBOX.T.\(number) 1 16 16\r\nNATS/1.0 503\r\n\r\n\r\n"
            default:
                text += "PING\r\nMSG _INBOX.T.\(number) 1 2\r\n{}\r\n"
            }
        }
        return Array(text.utf8)
    }

    @Test func mutatedStreamsNeverTrapAndEveryPublishHearsOnce() {
        var random = SplitMix(seed: 0x4A75_0000_0000_0001)
        var closedEarly = 0
        let t0 = DispatchTime(uptimeNanoseconds: 1_000_000_000)
        for _ in 0..<2_000 {
            var machine = Machine(configuration: NATSConfiguration(url: try! NATSURL.parse("nats://h:4222")), inboxToken: "T")
            _ = machine.open(now: t0)
            let count = Int.random(in: 1...6, using: &random)
            var heard: [Int] = []
            var closed = false
            func take(_ actions: [Machine.Action]) {
                for action in actions {
                    switch action {
                    case .deliver(let waiter, _): heard.append(waiter)
                    case .fail(let waiters, _): heard += waiters
                    case .close(_, let unanswered): heard += unanswered; closed = true
                    default: break
                    }
                }
            }
            for waiter in 1...count {
                take(machine.publish(NATSPublish(subject: "a.b", headers: [("Nats-Msg-Id", "\(waiter)")], payload: []), waiter: waiter,
                                     deadline: t0.advanced(by: .seconds(1))))
            }
            take(machine.established())
            var bytes = Array("INFO {\"headers\":true}\r\nPONG\r\n".utf8) + Self.answers(count, &random)
            for _ in 0..<Int.random(in: 0...3, using: &random) { Self.mutate(&bytes, &random) }
            var start = 0
            for cut in (0..<3).map({ _ in Int.random(in: 0...bytes.count, using: &random) }).sorted() + [bytes.count] {
                take(machine.received(bytes[start..<cut], now: t0))
                start = cut
            }
            if closed { closedEarly += 1 }
            take(machine.deadlinePassed(now: t0.advanced(by: .seconds(10))))
            take(machine.inputEnded())
            #expect(heard.sorted() == Array(1...count), "each publish once: \(heard)")
        }
        #expect(closedEarly > 100, "the mutations reach the protocol errors (\(closedEarly))")
    }

    static func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix) {
        guard !bytes.isEmpty else { return }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<4, using: &random) {
        case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
        case 1: bytes.remove(at: at)
        case 2: bytes.insert(contentsOf: fragments.randomElement(using: &random)!.utf8, at: at)
        default: bytes.replaceSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &random)), with: [])
        }
    }
}
