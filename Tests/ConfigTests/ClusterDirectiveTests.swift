import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// The `cluster` block (SPEC "Cluster mode").
@Suite struct ClusterDirectiveTests {
    @Test func theSpecExampleParses() throws {
        let c = try parsed("""
            cluster redis://relay:s3cret@redis.internal:6380/2 {   # rediss:// for TLS
                ca-file ./redis-ca.pem
                instance-id ${HOSTNAME}
                dedupe-window 14d
                claim-after 1m
                wait-replicas 1
                wait-timeout 2s
                require-aof no
                require-noeviction no
            }
            """, environment: ["HOSTNAME": "relay-7f9c"])
        let cluster = try #require(c.cluster)
        #expect(cluster.url.host == "redis.internal" && cluster.url.port == 6380 && cluster.url.database == 2)
        #expect(cluster.url.user == "relay" && cluster.url.password == "s3cret")
        #expect(cluster.caFile == "./redis-ca.pem" && cluster.instanceId == "relay-7f9c")
        #expect(cluster.dedupeWindow == .seconds(14 * 86_400) && cluster.claimAfter == .seconds(60))
        #expect(cluster.waitReplicas == 1 && cluster.waitTimeout == .seconds(2) && !cluster.requireAOF && !cluster.requireNoEviction)
        #expect(cluster.warnings.count == 2 && cluster.warnings[1].hasPrefix("require-noeviction no: "))
        let report = c.checkReport()
        #expect(report.contains("require-aof no, require-noeviction no"))
        #expect(report.contains("Cluster mode: redis://relay:***@redis.internal:6380/2"))
        #expect(!report.contains("s3cret"), "the password never shows")
    }

    @Test func defaultsAndTheTopLevelWindow() throws {
        let bare = try #require(try parsed("cluster redis://127.0.0.1:6379\n").cluster)
        #expect(bare.instanceId == nil && bare.claimAfter == .seconds(60) && bare.waitReplicas == 0 && bare.requireAOF)
        #expect(bare.requireNoEviction && bare.warnings.isEmpty, "eviction is refused unless waived")
        #expect(bare.dedupeWindow == .seconds(14 * 86_400))
        // Without its own, the block takes the top-level dedupe-window.
        let window = try #require(try parsed("dedupe-window 30d\ncluster redis://127.0.0.1:6379 {\n    claim-after 10s\n}\n").cluster)
        #expect(window.dedupeWindow == .seconds(30 * 86_400) && window.claimAfter == .seconds(10))
        #expect(try parsed("listen 127.0.0.1:8080\n").cluster == nil, "single-node mode without the line")
        #expect(try parsed("listen 127.0.0.1:8080\n").checkReport().contains("Single-node mode"))
    }

    @Test func eachMistakeIsNamed() {
        func block(_ line: String) -> String { "cluster redis://127.0.0.1:6379 {\n    \(line)\n}\n" }
        expectError("cluster\n", .missingArgument, line: 1, column: 8, containing: "cluster redis://")
        expectError("cluster http://127.0.0.1:6379\n", .invalidValue, line: 1, column: 9, containing: "not a Redis URL")
        expectError("cluster redis://a:1\ncluster redis://b:2\n", .duplicate, line: 2, column: 1)
        expectError(block("instance-id a/b"), .invalidValue, line: 2, column: 17, containing: "not an instance id")
        expectError(block("dedupe-window 3d"), .invalidValue, line: 2, column: 19, containing: "at least 7d")
        expectError(block("claim-after 500ms"), .invalidValue, line: 2, column: 17, containing: "shorter than 1s")
        expectError(block("wait-replicas many"), .invalidValue, line: 2, column: 19)
        expectError(block("wait-timeout 0s"), .invalidValue, line: 2, column: 18, containing: "zero")
        expectError(block("require-aof maybe"), .invalidValue, line: 2, column: 17, containing: "yes or no")
        expectError(block("require-noeviction sometimes"), .invalidValue, line: 2, column: 24, containing: "yes or no")
        expectError(block("claim-after 1m\n    claim-after 2m"), .duplicate, line: 3, column: 5)
        expectError(block("replicas 2"), .unknownOption, line: 2, column: 5, containing: "instance-id")
    }
}
