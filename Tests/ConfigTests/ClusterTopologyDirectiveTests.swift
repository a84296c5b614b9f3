import StoreRelayNet
import Testing
@testable import StoreRelayConfig

/// The `cluster` line's topology forms (docs/SPEC.md "Cluster mode", Topologies):
/// `redis-cluster://` seeds and `sentinel://` sentinels, and what `storerelay check` says.
@Suite struct ClusterTopologyDirectiveTests {
    @Test func redisClusterSeeds() throws {
        let c = try parsed("""
            cluster redis-cluster://relay:${REDIS_PASSWORD}@10.0.0.1:7000,10.0.0.2:7000 {
                instance-id a
            }
            """, environment: ["REDIS_PASSWORD": "s3cret"])
        let cluster = try #require(c.cluster)
        #expect(cluster.topology == .cluster(seeds: [HostPort(host: "10.0.0.1", port: 7000, kind: .ipv4),
                                                     HostPort(host: "10.0.0.2", port: 7000, kind: .ipv4)]))
        #expect(cluster.url.user == "relay" && cluster.url.password == "s3cret" && cluster.url.database == 0)
        #expect(cluster.server == "redis-cluster://relay:***@10.0.0.1:7000,10.0.0.2:7000")
        let report = c.checkReport()
        #expect(report.contains("Cluster mode: redis-cluster://relay:***@10.0.0.1:7000,10.0.0.2:7000"), "\(report)")
        #expect(report.contains("topology: Redis Cluster: slots asked of seeds 10.0.0.1:7000, 10.0.0.2:7000"), "\(report)")
        #expect(!report.contains("s3cret"), "the password never shows")
    }

    @Test func sentinels() throws {
        let c = try parsed("cluster rediss-sentinel://:s3cret@s1.internal,s2.internal:26380/relay-primary/2 {\n    ca-file ./ca.pem\n}\n")
        let cluster = try #require(c.cluster)
        #expect(cluster.topology == .sentinel(sentinels: [HostPort(host: "s1.internal", port: 26379, kind: .hostname),
                                                          HostPort(host: "s2.internal", port: 26380, kind: .hostname)],
                                              primaryName: "relay-primary"))
        #expect(cluster.url.usesTLS && cluster.url.database == 2 && cluster.caFile == "./ca.pem")
        let report = c.checkReport()
        #expect(report.contains("Cluster mode: rediss-sentinel://:***@s1.internal:26379,s2.internal:26380/relay-primary/2"), "\(report)")
        #expect(report.contains("topology: Sentinel: the primary 'relay-primary' as sentinels s1.internal:26379, s2.internal:26380 name it"))
        #expect(!report.contains("s3cret"))
    }

    @Test func oneServerHasNoTopologyLine() throws {
        let c = try parsed("cluster redis://127.0.0.1:6379\n")
        #expect(c.cluster?.topology == .standalone)
        #expect(!c.checkReport().contains("topology:"))
    }

    /// The password goes to whatever the seeds or sentinels lead to: plaintext is warned
    /// about unless every host named is this machine.
    @Test func aPlaintextPasswordToAnyNamedHostIsWarnedAbout() throws {
        let remote = try parsed("cluster redis-cluster://:s3cret@127.0.0.1:7000,10.0.0.2:7000\n")
        let warning = try #require(remote.warnings.first { $0.contains("in plaintext") })
        #expect(warning.contains("use rediss-cluster://") && !warning.contains("s3cret"), "\(warning)")
        #expect(try parsed("cluster sentinel://:s3cret@10.0.0.1/m\n").warnings.contains { $0.contains("use rediss-sentinel://") })
        #expect(!(try parsed("cluster redis-cluster://:s3cret@127.0.0.1:7000,localhost:7001\n").warnings.contains { $0.contains("plaintext") }))
        #expect(!(try parsed("cluster rediss-cluster://:s3cret@10.0.0.2:7000\n").warnings.contains { $0.contains("plaintext") }))
    }

    @Test func mistakesAreNamedWithoutThePassword() {
        expectError("cluster redis-cluster://u:hunter2@h:0\n", .invalidValue, line: 1, column: 9, containing: "port 0")
        expectError("cluster sentinel://u:hunter2@s1\n", .invalidValue, line: 1, column: 9, containing: "not a primary's name")
        expectError("cluster redis-cluster://h:1/2\n", .invalidValue, line: 1, column: 9, containing: "only database 0")
        for text in ["cluster redis-cluster://u:hunter2@h:0\n", "cluster sentinel://u:hunter2@s1\n"] {
            #expect(!errors(text).contains { $0.description.contains("hunter2") })
        }
    }
}
