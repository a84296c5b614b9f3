import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Cluster mode's acknowledgements while the server moves underneath (docs/SPEC.md "Cluster
/// mode", Topologies): a reshard of the `{storerelay}` slot in a real 3-primary Redis
/// Cluster, and a Sentinel failover of a real primary with `wait-replicas 1`. Notifications
/// keep coming, each retried until answered 200 as Apple retries a 503; every one answered
/// 200 is on the server afterwards, stored once.
@Suite(.serialized)
struct ClusterTopologyTests {
    /// A client through `url`'s topology that checks what cluster mode checks.
    func client(_ url: String, requirements: ServerRequirements = ServerRequirements()) throws -> RedisClient {
        let (redisURL, topology) = try RedisTopology.parse(url)
        var configuration = RedisConfiguration(url: redisURL)
        configuration.topology = topology
        configuration.slotKey = ClusterKeys.prefix
        configuration.connectTimeout = .seconds(3)
        configuration.commandTimeout = .seconds(4)
        configuration.reconnectInitial = .milliseconds(20)
        configuration.reconnectMaximum = .milliseconds(200)
        configuration.sentinelCheckInterval = .milliseconds(500)
        configuration.connectionChecks = requirements.checks
        configuration.acceptConnection = requirements.refusal
        let client = RedisClient(configuration: configuration)
        client.start()
        return client
    }

    @Test(.enabled(if: RedisClusterProcesses.isAvailable, Comment(rawValue: RedisClusterProcesses.skipMessage)))
    func aReshardOfTheSlotLosesNoAcknowledgement() throws {
        let cluster = try RedisClusterProcesses()
        let slot = RedisHashSlot.of(ClusterKeys.prefix)
        let source = try #require(cluster.owner(of: slot))
        let target = try #require(cluster.nodes.first { $0 !== source })
        let redis = try client("redis-cluster://127.0.0.1:\(cluster.nodes[0].port)")
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 10) { redis.isConnected }, "\(String(describing: redis.lastError))")
        #expect(redis.connectedNode?.port == UInt16(source.port))

        let load = TopologyLoad(ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(7 * 86_400)))
        #expect(pollUntil(timeout: 10) { load.acknowledged.count >= 40 })
        // Five keys per MIGRATE, with acknowledgements in between: the slot is half here,
        // half there for a while.
        let moved = try cluster.move(slot: slot, to: target, batch: 5) { Thread.sleep(forTimeInterval: 0.02) }
        let before = load.acknowledged.count
        #expect(pollUntil(timeout: 15) { load.acknowledged.count >= before + 40 }, "acknowledgements resume on the new owner")
        #expect(load.stop())

        #expect(moved > 100, "\(moved) keys moved")
        #expect(redis.connectedNode?.port == UInt16(target.port), "followed the slot")
        let missing = try load.missing(on: target)
        #expect(missing.isEmpty, "acknowledged, not on the new owner: \(missing)")
        #expect(try target.command("XLEN", ClusterKeys().queue("billing")) == String(load.acknowledged.count), "each stored once")
        #expect(try source.command("DBSIZE") == "0", "nothing left behind")
    }

    /// The instance claim is a connection check on a key of the slot: a connection made to
    /// follow an ASK (to the importing node, which answers MOVED to it without ASKING) must
    /// not be refused for it.
    @Test(.enabled(if: RedisClusterProcesses.isAvailable, Comment(rawValue: RedisClusterProcesses.skipMessage)))
    func aClaimedInstanceFollowsTheSlotWhileItMigrates() throws {
        let cluster = try RedisClusterProcesses()
        let slot = RedisHashSlot.of(ClusterKeys.prefix)
        let source = try #require(cluster.owner(of: slot))
        let target = try #require(cluster.nodes.first { $0 !== source })
        let claim = InstanceClaim(instanceId: "relay-1")
        let (url, topology) = try RedisTopology.parse("redis-cluster://127.0.0.1:\(source.port)")
        var configuration = RedisConfiguration(url: url)
        configuration.topology = topology
        configuration.slotKey = ClusterKeys.prefix
        claim.guardConnections(of: &configuration)
        let redis = RedisClient(configuration: configuration)
        redis.start()
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 10) { redis.isConnected }, "\(String(describing: redis.lastError))")
        let keys = (0..<6).map { ClusterKeys.prefix + "k\($0)" }
        for key in keys { #expect(reply(redis, "SET", key, "v")?.string == "OK") }
        var followed = 0
        try cluster.move(slot: slot, to: target, batch: 2) {
            let moved = ((try? target.commands([["ASKING"], ["KEYS", "*"]]).last) ?? "").split(separator: "\n").map(String.init)
            for key in moved where keys.contains(key) {
                #expect(reply(redis, "GET", key)?.string == "v", "\(key) read through ASK")
                followed += 1
            }
        }
        #expect(followed > 0)
        #expect(reply(redis, "GET", keys[0])?.string == "v", "and through MOVED")
        #expect(pollUntil(timeout: 5) { redis.connectedNode?.port == UInt16(target.port) })
        #expect(try target.command("GET", ClusterKeys().claim("relay-1")) == claim.token, "the claim moved with the slot")
    }

    @Test(.enabled(if: RedisServerProcess.isValkeyAvailable, Comment(rawValue: RedisServerProcess.valkeySkipMessage)))
    func aSentinelFailoverWithWaitReplicasLosesNoAcknowledgement() throws {
        let deployment = try SentinelDeployment()
        let requirements = ServerRequirements(waitReplicas: 1)
        let redis = try client(deployment.url, requirements: requirements)
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 10) { redis.isConnected }, "\(String(describing: redis.lastError))")
        let acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(7 * 86_400), waitReplicas: 1,
                                                     waitTimeout: .milliseconds(500))
        let load = TopologyLoad(acknowledgement)
        #expect(pollUntil(timeout: 10) { load.acknowledged.count >= 40 })

        try deployment.failover()
        #expect(pollUntil(timeout: 15) { redis.connectedNode?.port == UInt16(deployment.replica.port) }, "followed the failover")
        let before = load.acknowledged.count
        // 503s until the old primary, demoted, has resynced as the new one's replica.
        #expect(pollUntil(timeout: 45) { load.acknowledged.count >= before + 20 }, "acknowledgements resume with a replica again")
        #expect(load.stop())

        let missing = try load.missing(on: deployment.replica)
        #expect(missing.isEmpty, "acknowledged, not on the new primary: \(missing)")
        #expect(try deployment.replica.command("XLEN", ClusterKeys().queue("billing")) == String(load.acknowledged.count))
        #expect(load.refusals.contains { $0.contains("WAITAOF") }, "the replica-less stretch was refused, not acknowledged")
    }
}
