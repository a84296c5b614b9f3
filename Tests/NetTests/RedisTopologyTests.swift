@testable import StoreRelayNet
import Testing

/// The `cluster` line's URL forms (`redis-cluster://`, `sentinel://`), hash slots, and the
/// sentinels' tally. Pure: no server.
@Suite struct RedisTopologyTests {
    @Test func aPlainURLIsOneServer() throws {
        let (url, topology) = try RedisTopology.parse("rediss://relay:secret@cache.internal:6380/2")
        #expect(topology == .standalone && url.usesTLS && url.host == "cache.internal" && url.database == 2)
        #expect(topology.describe(url) == url.description)
    }

    @Test func clusterSeedsWithCredentialsAndDefaultPorts() throws {
        let (url, topology) = try RedisTopology.parse("redis-cluster://relay:p%40ss@10.0.0.1:7000,cache-b,[::1]:7002")
        #expect(topology == .cluster(seeds: [
            HostPort(host: "10.0.0.1", port: 7000, kind: .ipv4), HostPort(host: "cache-b", port: 6379, kind: .hostname),
            HostPort(host: "::1", port: 7002, kind: .ipv6),
        ]))
        #expect(url.user == "relay" && url.password == "p@ss" && !url.usesTLS && url.database == 0)
        #expect(url.host == "10.0.0.1" && url.port == 7000, "the first seed stands in for the host")
        #expect(topology.describe(url) == "redis-cluster://relay:***@10.0.0.1:7000,cache-b:6379,[::1]:7002")
        let (tls, _) = try RedisTopology.parse("REDISS-CLUSTER://h:1")
        #expect(tls.usesTLS)
    }

    @Test func sentinelsNameThePrimaryAndMayPickADatabase() throws {
        let (url, topology) = try RedisTopology.parse("sentinel://:hunter2@s1,s2:26380/mymaster/3")
        #expect(topology == .sentinel(sentinels: [HostPort(host: "s1", port: 26379, kind: .hostname),
                                                  HostPort(host: "s2", port: 26380, kind: .hostname)], primaryName: "mymaster"))
        #expect(url.password == "hunter2" && url.user == nil && url.database == 3)
        #expect(topology.describe(url) == "sentinel://:***@s1:26379,s2:26380/mymaster/3")
        #expect(!topology.describe(url).contains("hunter2"))
        let (plain, alias) = try RedisTopology.parse("redis-sentinel://s1/main.cache_1")
        #expect(alias == .sentinel(sentinels: [HostPort(host: "s1", port: 26379, kind: .hostname)], primaryName: "main.cache_1"))
        #expect(!plain.usesTLS && plain.database == 0)
        #expect(try RedisTopology.parse("rediss-sentinel://s1/m").url.usesTLS)
    }

    @Test(arguments: [
        "redis-cluster://", "redis-cluster://h:0", "redis-cluster://h/3", "redis-cluster://h,,k", "redis-cluster://::1:7000",
        "sentinel://s1", "sentinel://s1/", "sentinel://s1/my master", "sentinel://s1/m/x", "sentinel://s1:99999/m",
        "redis-cluster://" + Array(repeating: "h:1", count: 17).joined(separator: ","),
    ])
    func refusesMalformedTopologyURLs(_ text: String) {
        #expect(throws: AddressError.self) { try RedisTopology.parse(text) }
    }

    @Test func errorsNeverEchoThePassword() {
        for text in ["redis-cluster://u:hunter2@h:0", "sentinel://u:hunter2@s1/", "redis-cluster://u:hunter2@::1:1"] {
            do {
                _ = try RedisTopology.parse(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(!error.description.contains("hunter2"), "\(error)")
            }
        }
    }

    /// The cluster specification's examples, and the slot `CLUSTER KEYSLOT` gives StoreRelay's keys.
    @Test func hashSlotsFollowTheClusterSpecification() {
        #expect(RedisHashSlot.of("123456789") == 0x31C3 & 16_383, "CRC16/XMODEM's check value")
        #expect(RedisHashSlot.of("foo") == 12_182)
        #expect(RedisHashSlot.of("{storerelay}") == 12_454)
        #expect(RedisHashSlot.of("storerelay:{storerelay}:seen:abc") == 12_454, "the tag decides")
        #expect(RedisHashSlot.of("{user1000}.following") == RedisHashSlot.of("{user1000}.followers"))
        #expect(RedisHashSlot.of("foo{}{bar}") == RedisHashSlot.of("foo{}{bar}"), "an empty tag hashes the whole key")
        #expect(RedisHashSlot.of("foo{}{bar}") != RedisHashSlot.of("bar"))
        #expect(RedisHashSlot.of("foo{{bar}}zap") == RedisHashSlot.of("{bar"))
    }

    /// During a failover the sentinels disagree for a moment: the most named primary wins,
    /// a tie goes to the earliest-listed sentinel's, and silence is not a vote.
    @Test func theSentinelsTallyCountsWhoAnswered() {
        let old = HostPort(host: "10.0.0.1", port: 6379, kind: .ipv4)
        let new = HostPort(host: "10.0.0.2", port: 6379, kind: .ipv4)
        #expect(SentinelTally.verdict([old, new, new]) == .primary(new))
        #expect(SentinelTally.verdict([nil, .some(new), .some(old)]) == .primary(new), "a tie: the earlier one")
        #expect(SentinelTally.verdict([.some(old), nil, nil]) == .primary(old), "one answer is enough")
        #expect(SentinelTally.verdict([nil, nil, nil]) == .noAnswer)
        #expect(SentinelTally.verdict([]) == .noAnswer)
        #expect(SentinelTally.verdict([.some(nil), .some(nil), .some(new)]) == .unknown, "most know no such primary")
    }
}
