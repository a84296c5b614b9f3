import StoreRelayNet
import Testing

/// Thousands of mutated topology replies (CLUSTER SHARDS and SLOTS, MOVED and ASK, SENTINEL
/// and ROLE answers), mutated as bytes on the wire and as reply trees: the parsers never
/// trap, and whatever they accept is within bounds (slots 0...16383, ports 1...65535, hosts
/// that `HostPort` itself would accept). Seeded, so a failure replays. `Fuzz/` has the same
/// checks as a libFuzzer target (FuzzRedisTopology) for longer runs.
@Suite struct TopologyReplyFuzzTests {
    static let seeds: [String] = [
        TopologyReplyTests.slotsReply,
        encode(.array([
            TopologyReplyTests.shard([0, 100, 200, 16_383], [
                TopologyReplyTests.node(TopologyReplyTests.bulk("primary.internal"), port: 7003, role: "master", tlsPort: 8003),
                TopologyReplyTests.node(TopologyReplyTests.bulk("10.0.0.2"), port: 7001, role: "replica", health: "loading"),
            ]),
            TopologyReplyTests.shard([101, 199], [TopologyReplyTests.node(.bulkString(nil), port: 7004, role: "master")]),
        ])),
        "*2\r\n$9\r\n127.0.0.1\r\n$5\r\n17101\r\n", "*-1\r\n",
        "*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n", "*5\r\n$5\r\nslave\r\n$9\r\n127.0.0.1\r\n:17101\r\n$9\r\nconnected\r\n:827\r\n",
        "-MOVED 12454 127.0.0.1:17003\r\n", "-ASK 0 cache-2.internal:6380\r\n", "-MOVED 1 ::1:7000\r\n", "-ASK 16383 :7000\r\n",
    ]

    @Test func mutatedWireRepliesNeverTrapAndStayInBounds() {
        var random = SplitMix(seed: 0x70B0_1061_0000_0001)
        var accepted = 0
        for iteration in 0..<6_000 {
            var bytes = Array(Self.seeds[iteration % Self.seeds.count].utf8)
            for _ in 0..<Int.random(in: 1...4, using: &random) { Self.mutate(&bytes, &random) }
            var parser = RESPParser()
            parser.feed(bytes)
            while let reply = try? parser.next() { accepted += Self.checkEveryParser(reply) }
        }
        #expect(accepted > 200, "the mutations still reach the parsers' accepting paths (\(accepted))")
    }

    @Test func mutatedReplyTreesNeverTrapAndStayInBounds() {
        var random = SplitMix(seed: 0x70B0_1061_0000_0002)
        var accepted = 0
        for iteration in 0..<6_000 {
            var parser = RESPParser()
            parser.feed(Array(Self.seeds[iteration % Self.seeds.count].utf8))
            guard var reply = try? parser.next() else { continue }
            for _ in 0..<Int.random(in: 1...3, using: &random) { reply = Self.mutate(reply, depth: 0, &random) }
            accepted += Self.checkEveryParser(reply)
        }
        #expect(accepted > 500, "\(accepted)")
    }

    // MARK: Checks

    /// Runs every topology parser on `reply`; how many accepted it.
    static func checkEveryParser(_ reply: RESPValue) -> Int {
        let askedAt = HostPort(host: "10.0.0.9", port: 7000, kind: .ipv4)
        var accepted = 0
        for map in [try? ClusterSlotMap.shards(reply, usesTLS: false), try? ClusterSlotMap.shards(reply, usesTLS: true),
                    try? ClusterSlotMap.slots(reply)] {
            guard let map else { continue }
            accepted += map.ranges.isEmpty ? 0 : 1
            for range in map.ranges {
                #expect(0 <= range.lower && range.lower <= range.upper && range.upper < RedisHashSlot.count, "\(range)")
                #expect(range.port > 0)
                if let host = range.host { checkAddress(host) }
                if let primary = map.primary(of: range.upper, askedAt: askedAt) { checkAddress(primary) }
            }
        }
        if let redirect = RedisRedirect.parse(reply) {
            accepted += 1
            #expect(redirect.slot >= 0 && redirect.slot < RedisHashSlot.count && redirect.port > 0)
            let target = redirect.target(sentTo: askedAt)
            checkAddress(target)
            let again = RedisRedirect.parse(.error("\(redirect.kind.rawValue) \(redirect.slot) \(target.host):\(target.port)"))
            #expect(again?.slot == redirect.slot && again?.target(sentTo: askedAt) == target, "\(reply) reads back")
        }
        if let named = try? SentinelReplies.primaryAddress(reply) {  // `try?` flattens: "none" is nil too
            accepted += 1
            checkAddress(named)
        }
        if let role = try? SentinelReplies.role(reply) {
            accepted += 1
            #expect(["master", "slave", "sentinel"].contains(role))
        }
        return accepted
    }

    /// An address a reply gave is one configuration would accept, port 0 excepted.
    static func checkAddress(_ address: HostPort) {
        #expect(address.port > 0)
        #expect((try? HostPort.parse(address.description)) == address, "\(address) is not an address HostPort accepts")
    }

    // MARK: Mutations

    static let fragments = ["\r\n", ":", "*", "$", "-", "+", "0", "16384", "65536", "-1", "?", "::1", "[", "]", "*-1\r\n",
                            "$-1\r\n", "*0\r\n", "master", "slave", "MOVED ", "ASK ", "endpoint", "tls-port", "slots", "nodes"]

    static func mutate(_ bytes: inout [UInt8], _ random: inout SplitMix) {
        guard !bytes.isEmpty else { return bytes = Array(fragments.randomElement(using: &random)!.utf8) }
        let at = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
        case 1: bytes.remove(at: at)
        case 2: bytes.insert(contentsOf: fragments.randomElement(using: &random)!.utf8, at: at)
        case 3: bytes[at] = [48, 49, 57, 58, 13, 10].randomElement(using: &random)!
        default: bytes.replaceSubrange(at..<min(bytes.count, at + Int.random(in: 1...8, using: &random)), with: [])
        }
    }

    static let palette: [RESPValue] = [
        .integer(0), .integer(-1), .integer(16_383), .integer(16_384), .integer(65_535), .integer(65_536), .integer(.max), .integer(.min),
        .bulkString(nil), .bulkString([]), .array(nil), .array([]), .error("ERR x"), .simpleString("master"),
        .bulkString(Array("?".utf8)), .bulkString(Array("::1".utf8)), .bulkString(Array("999.1.1.1".utf8)),
        .bulkString(Array("host name".utf8)), .bulkString(Array("a.b".utf8)), .bulkString(Array("7000".utf8)),
        .bulkString(Array("master".utf8)), .bulkString(Array("failed".utf8)), .bulkString(Array("port".utf8)),
    ]

    static func mutate(_ value: RESPValue, depth: Int, _ random: inout SplitMix) -> RESPValue {
        guard case .array(var elements?) = value, !elements.isEmpty, depth < 6 else {
            return palette.randomElement(using: &random)!
        }
        let at = Int.random(in: 0..<elements.count, using: &random)
        switch Int.random(in: 0..<5, using: &random) {
        case 0: elements[at] = palette.randomElement(using: &random)!
        case 1: elements.remove(at: at)
        case 2: elements.insert(elements[at], at: at)
        case 3: elements.swapAt(at, Int.random(in: 0..<elements.count, using: &random))
        default: elements[at] = mutate(elements[at], depth: depth + 1, &random)
        }
        return .array(elements)
    }

    static func encode(_ value: RESPValue) -> String {
        switch value {
        case .simpleString(let text): "+\(text)\r\n"
        case .error(let text): "-\(text)\r\n"
        case .integer(let number): ":\(number)\r\n"
        case .bulkString(nil): "$-1\r\n"
        case .bulkString(let bytes?): "$\(bytes.count)\r\n\(String(decoding: bytes, as: UTF8.self))\r\n"
        case .array(nil): "*-1\r\n"
        case .array(let elements?): "*\(elements.count)\r\n" + elements.map(encode).joined()
        }
    }
}

/// SplitMix64 (as StoreRelayTestSupport's, which this target does not link): repeatable runs.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
