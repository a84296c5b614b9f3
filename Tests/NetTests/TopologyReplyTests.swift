import StoreRelayNet
import Testing

/// What cluster nodes and sentinels answer, read by the parsers the locator uses: real
/// replies captured from redis-server 7.0 and valkey-server 8.1, and the odd ones the
/// documentation allows (unknown endpoints, TLS ports, failed primaries).
@Suite struct TopologyReplyTests {
    static let askedAt = HostPort(host: "10.0.0.9", port: 7000, kind: .ipv4)

    /// `CLUSTER SLOTS` as redis-server 7.0 answered it for a 3-primary cluster.
    static let slotsReply = "*3\r\n*3\r\n:0\r\n:5460\r\n*4\r\n$9\r\n127.0.0.1\r\n:17001\r\n$40\r\n52026d7956d3b8d3bc6936daad65ca9975bf087d\r\n*0\r\n"
        + "*3\r\n:5461\r\n:10922\r\n*4\r\n$9\r\n127.0.0.1\r\n:17002\r\n$40\r\n3abeaf05e8b53387e4218e1d9a08b90bc139feff\r\n*0\r\n"
        + "*3\r\n:10923\r\n:16383\r\n*4\r\n$9\r\n127.0.0.1\r\n:17003\r\n$40\r\nf33829b6a189d58ea45d1ee5db8b89096956294f\r\n*0\r\n"

    static func parsed(_ text: String) -> RESPValue {
        var parser = RESPParser()
        parser.feed(Array(text.utf8))
        return try! parser.next()!
    }

    static func bulk(_ text: String) -> RESPValue { .bulkString(Array(text.utf8)) }

    /// One shard of `CLUSTER SHARDS` (RESP2: maps are flat name/value arrays).
    static func shard(_ slots: [Int64], _ nodes: [[(String, RESPValue)]]) -> RESPValue {
        .array([bulk("slots"), .array(slots.map(RESPValue.integer)), bulk("nodes"),
                .array(nodes.map { node in .array(node.flatMap { [bulk($0.0), $0.1] }) })])
    }

    static func node(_ endpoint: RESPValue, port: Int64, role: String, health: String = "online", tlsPort: Int64? = nil) -> [(String, RESPValue)] {
        var fields: [(String, RESPValue)] = [("id", bulk("52026d7956d3b8d3bc6936daad65ca9975bf087d")), ("port", .integer(port))]
        if let tlsPort { fields.append(("tls-port", .integer(tlsPort))) }
        fields += [("ip", bulk("127.0.0.1")), ("endpoint", endpoint), ("role", bulk(role)),
                   ("replication-offset", .integer(0)), ("health", bulk(health))]
        return fields
    }

    @Test func clusterSlotsNamesEachRangesPrimary() throws {
        let map = try ClusterSlotMap.slots(Self.parsed(Self.slotsReply))
        #expect(map.ranges.count == 3)
        #expect(map.primary(of: 12_454, askedAt: Self.askedAt) == HostPort(host: "127.0.0.1", port: 17003, kind: .ipv4))
        #expect(map.primary(of: 0, askedAt: Self.askedAt)?.port == 17001)
        #expect(map.primary(of: 5461, askedAt: Self.askedAt)?.port == 17002)
    }

    @Test func clusterShardsPicksTheLivePrimaryAndItsTLSPort() throws {
        let reply = RESPValue.array([
            Self.shard([0, 100, 200, 16_383], [
                Self.node(Self.bulk("replica.internal"), port: 7001, role: "replica"),
                Self.node(Self.bulk("old.internal"), port: 7002, role: "master", health: "failed"),
                Self.node(Self.bulk("primary.internal"), port: 7003, role: "master", tlsPort: 8003),
            ]),
            Self.shard([101, 199], [Self.node(.bulkString(nil), port: 7004, role: "master")]),
        ])
        let plain = try ClusterSlotMap.shards(reply, usesTLS: false)
        #expect(plain.primary(of: 12_454, askedAt: Self.askedAt) == HostPort(host: "primary.internal", port: 7003, kind: .hostname))
        #expect(plain.primary(of: 50, askedAt: Self.askedAt)?.port == 7003, "both ranges of the shard")
        let tls = try ClusterSlotMap.shards(reply, usesTLS: true)
        #expect(tls.primary(of: 12_454, askedAt: Self.askedAt)?.port == 8003)
        #expect(plain.primary(of: 150, askedAt: Self.askedAt) == Self.askedAt.with(port: 7004), "NULL endpoint: the host asked")
    }

    @Test(arguments: [RESPValue.bulkString(Array("?".utf8)), .bulkString([]), .bulkString(nil)])
    func anUnknownEndpointMeansTheHostAsked(_ endpoint: RESPValue) throws {
        let slots = RESPValue.array([.array([.integer(0), .integer(16_383), .array([endpoint, .integer(7005)])])])
        #expect(try ClusterSlotMap.slots(slots).primary(of: 9, askedAt: Self.askedAt) == Self.askedAt.with(port: 7005))
    }

    @Test func unusableRangesAreSkippedNotTrusted() throws {
        let slots = RESPValue.array([
            .array([.integer(16_000), .integer(16_384), .array([Self.bulk("a.internal"), .integer(1)])]),  // slot out of range
            .array([.integer(9), .integer(3), .array([Self.bulk("b.internal"), .integer(1)])]),  // reversed
            .array([.integer(0), .integer(10), .array([Self.bulk("c.internal"), .integer(0)])]),  // port 0
            .array([.integer(0), .integer(10), .array([Self.bulk("bad host!"), .integer(1)])]),
            .array([.integer(0), .integer(10), .array([Self.bulk("1.2.3.999"), .integer(1)])]),
            .array([.integer(0)]),
            .error("ERR"),
        ])
        #expect(try ClusterSlotMap.slots(slots).ranges.isEmpty)
        #expect(throws: TopologyReplyError.self) { try ClusterSlotMap.slots(.error("ERR unknown command 'CLUSTER'")) }
        #expect(throws: TopologyReplyError.self) { try ClusterSlotMap.shards(.integer(3), usesTLS: false) }
    }

    @Test func redirectionsNameSlotAndNode() {
        let moved = RedisRedirect.parse(.error("MOVED 12454 127.0.0.1:17003"))
        #expect(moved?.kind == .moved && moved?.slot == 12_454)
        #expect(moved?.target(sentTo: Self.askedAt) == HostPort(host: "127.0.0.1", port: 17003, kind: .ipv4))
        let ask = RedisRedirect.parse(.error("ASK 0 cache-2.internal:6380"))
        #expect(ask?.kind == .ask && ask?.target(sentTo: Self.askedAt) == HostPort(host: "cache-2.internal", port: 6380, kind: .hostname))
        #expect(RedisRedirect.parse(.error("MOVED 1 ::1:7000"))?.target(sentTo: Self.askedAt) == HostPort(host: "::1", port: 7000, kind: .ipv6))
        #expect(RedisRedirect.parse(.error("MOVED 1 :7000"))?.target(sentTo: Self.askedAt) == Self.askedAt.with(port: 7000))
        #expect(RedisRedirect.parse(.error("ASK 1 ?:7001"))?.target(sentTo: Self.askedAt) == Self.askedAt.with(port: 7001))
    }

    @Test(arguments: [
        "MOVED", "MOVED 1", "MOVED 16384 h:1", "MOVED -1 h:1", "MOVED 1 h", "MOVED 1 h:0", "MOVED 1 h:65536", "MOVED 1 h:+1",
        "MOVED  1 h:1", "MOVED 1 h:1 extra", "moved 1 h:1", "ASKING 1 h:1", "MOVED 1 bad_host:1", "MOVED 1 1.2.3:1",
        "MOVED 1 h:", "TRYAGAIN Multiple keys request during rehashing of slot", "MOVED 00000000001 h:1",
    ])
    func malformedRedirectionsAreNotFollowed(_ message: String) {
        #expect(RedisRedirect.parse(.error(message)) == nil)
    }

    @Test func aRedirectionIsAnErrorReply() {
        #expect(RedisRedirect.parse(.simpleString("MOVED 1 h:1")) == nil)
        #expect(RedisRedirect.parse(Self.bulk("MOVED 1 h:1")) == nil)
    }

    @Test func sentinelsNameAPrimaryOrNone() throws {
        let named = RESPValue.array([Self.bulk("127.0.0.1"), Self.bulk("17101")])
        #expect(try SentinelReplies.primaryAddress(named) == HostPort(host: "127.0.0.1", port: 17_101, kind: .ipv4))
        #expect(try SentinelReplies.primaryAddress(.array(nil)) == nil, "no primary of that name")
        for bad in [RESPValue.error("ERR unknown command"), .array([Self.bulk("h")]), .array([Self.bulk("h"), Self.bulk("0")]),
                    .array([Self.bulk("no such host!"), Self.bulk("1")]), .bulkString(nil), .array([])] {
            #expect(throws: TopologyReplyError.self) { try SentinelReplies.primaryAddress(bad) }
        }
    }

    @Test func roleNamesWhatANodeIs() throws {
        #expect(try SentinelReplies.role(Self.parsed("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n")) == "master")
        #expect(try SentinelReplies.role(.array([Self.bulk("slave"), Self.bulk("127.0.0.1"), .integer(17_101)])) == "slave")
        #expect(throws: TopologyReplyError.self) { try SentinelReplies.role(.array([Self.bulk("leader")])) }
        #expect(throws: TopologyReplyError.self) { try SentinelReplies.role(.error("ERR unknown command 'ROLE'")) }
    }
}
