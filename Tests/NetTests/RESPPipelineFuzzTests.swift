import Dispatch
@testable import StoreRelayNet
import Testing

/// The RESP pipeline under random replies cut into random pieces, and under mutated bytes:
/// replies reach their commands in order whatever the chunking, the machine never traps, and
/// every waiter hears exactly once (a reply, or the failure that ends the connection). Seeded,
/// so a failure replays; `Fuzz/` fuzzes the reply parser under it (FuzzRESPReply) for longer.
@Suite struct RESPPipelineFuzzTests {
    private typealias Machine = RESPPipelineStateMachine<Int>

    /// A machine past a plain greeting, and the commands of `count` waiters sent on it.
    private func machine(waiting count: Int) -> Machine {
        var machine = Machine(configuration: RedisConfiguration(url: try! RedisURL.parse("redis://127.0.0.1:6379")))
        _ = machine.established()
        machine.received(Array("+OK\r\n".utf8))
        _ = machine.nextReply()
        _ = machine.send((0..<count).map { (RESPCommand("GET", "k\($0)"), $0) }, now: .now())
        return machine
    }

    /// `bytes` in up to five pieces cut at random places.
    private func pieces(_ bytes: [UInt8], _ random: inout SplitMix) -> [ArraySlice<UInt8>] {
        let cuts = (0..<Int.random(in: 0...4, using: &random)).map { _ in Int.random(in: 0...bytes.count, using: &random) }.sorted()
        var pieces: [ArraySlice<UInt8>] = []
        var start = 0
        for cut in cuts + [bytes.count] {
            pieces.append(bytes[start..<cut])
            start = cut
        }
        return pieces
    }

    @Test func randomRepliesInRandomPiecesReachTheirCommandsInOrder() {
        var random = SplitMix(seed: 0x5E5B_0000_0000_0001)
        for _ in 0..<400 {
            let replies = (0..<Int.random(in: 1...12, using: &random)).map { _ in Self.value(depth: 0, &random) }
            var machine = machine(waiting: replies.count)
            var delivered: [Int] = []
            var values: [RESPValue] = []
            for piece in pieces(Array(replies.map(TopologyReplyFuzzTests.encode).joined().utf8), &random) {
                machine.received(piece)
                while let action = machine.nextReply() {
                    guard case .deliver(let waiter, let value) = action else { Issue.record("\(action)"); return }
                    delivered.append(waiter)
                    values.append(value)
                }
            }
            #expect(delivered == Array(replies.indices) && values == replies)
        }
    }

    @Test func mutatedBytesNeverTrapAndEveryWaiterHearsOnce() {
        var random = SplitMix(seed: 0x5E5B_0000_0000_0002)
        var closedEarly = 0
        for _ in 0..<3_000 {
            let replies = (0..<Int.random(in: 1...6, using: &random)).map { _ in Self.value(depth: 0, &random) }
            var bytes = Array(replies.map(TopologyReplyFuzzTests.encode).joined().utf8)
            for _ in 0..<Int.random(in: 1...3, using: &random) { TopologyReplyFuzzTests.mutate(&bytes, &random) }
            var machine = machine(waiting: replies.count)
            var heard: [Int] = []
            for piece in pieces(bytes, &random) {
                machine.received(piece)
                while let action = machine.nextReply() {
                    switch action {
                    case .deliver(let waiter, _): heard.append(waiter)
                    case .close(_, let unanswered): heard += unanswered; closedEarly += 1
                    default: Issue.record("\(action)")
                    }
                }
            }
            if case .close(_, let unanswered)? = machine.inputEnded() { heard += unanswered }
            #expect(heard == Array(replies.indices), "each waiter once, in order: \(heard)")
            let after = machine.nextReply()
            #expect(after == nil && machine.state == .closed)
        }
        #expect(closedEarly > 100, "the mutations reach the protocol errors (\(closedEarly))")
    }

    /// A random reply: any RESP2 type, bulk strings with CRLFs inside, arrays three deep.
    static func value(depth: Int, _ random: inout SplitMix) -> RESPValue {
        func text(_ alphabet: String) -> String {
            String((0..<Int.random(in: 0...12, using: &random)).map { _ in alphabet.randomElement(using: &random)! })
        }
        switch Int.random(in: 0..<(depth < 3 ? 7 : 6), using: &random) {
        case 0: return .simpleString(text("abcOK "))
        case 1: return .error("ERR " + text("xyz "))
        case 2: return .integer(Int64.random(in: -1_000_000...1_000_000, using: &random))
        case 3: return .bulkString(nil)
        case 4: return .bulkString(Array(text("ab\r\n$*:-+").utf8))
        case 5: return .array(nil)
        default: return .array((0..<Int.random(in: 0...4, using: &random)).map { _ in value(depth: depth + 1, &random) })
        }
    }
}
