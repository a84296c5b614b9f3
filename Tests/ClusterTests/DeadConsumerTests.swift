import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Consumers of dead instances leave the groups (issue 26, point 6), against a real
/// `redis-server`: once nothing is pending on them and their instance holds no claim on its
/// id; never a live instance's, never one with entries still pending.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct DeadConsumerTests {
    let keys = ClusterKeys()

    func consumers(_ redis: RedisClient) -> [String] {
        let listed = reply(redis, "XINFO", "CONSUMERS", keys.queue("hook"), ClusterKeys.group)?.elements ?? []
        return listed.compactMap { fields in
            let pairs = fields.elements ?? []
            return stride(from: 0, to: pairs.count - 1, by: 2).first { pairs[$0].string == "name" }.flatMap { pairs[$0 + 1].string }
        }.sorted()
    }

    @Test func aDeadInstancesConsumerGoesOnceItsEntriesAreClaimed() throws {
        let server = try RedisServerProcess()
        let redis = try clusterClient(server)
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 5) { redis.isConnected })
        let survivor = ClusterQueue(client: redis, destination: "hook", consumer: "survivor")
        let dead = ClusterQueue(client: redis, destination: "hook", consumer: "dead")
        let live = ClusterQueue(client: redis, destination: "hook", consumer: "live")
        // Nothing on the server yet: nothing to remove, and no error.
        let none = ClusterQueue(client: redis, destination: "none", consumer: "x")
        #expect(try waitForResult { none.removeDeadConsumers(completion: $0) }.isEmpty)
        try waitForResult { survivor.prepare(completion: $0) }
        for id in ["evt-1", "evt-2"] {
            #expect(reply(redis, "XADD", keys.queue("hook"), "*", "id", id) != nil)
        }
        #expect(try waitForResult { dead.read(count: 1, completion: $0) }.count == 1)
        #expect(try waitForResult { live.read(count: 1, completion: $0) }.count == 1)
        // A dead instance that never got an entry.
        #expect(reply(redis, "XGROUP", "CREATECONSUMER", keys.queue("hook"), ClusterKeys.group, "empty")?.integer == 1)
        // `live` and `survivor` hold their claims; the others' have lapsed.
        for name in ["live", "survivor"] {
            #expect(reply(redis, "SET", keys.claim(name), "token", "PX", "15000")?.string == "OK")
        }
        #expect(consumers(redis) == ["dead", "empty", "live"])

        // An entry still pending keeps its dead instance's consumer.
        #expect(try waitForResult { survivor.removeDeadConsumers(completion: $0) } == ["empty"])
        #expect(consumers(redis) == ["dead", "live"])
        Thread.sleep(forTimeInterval: 0.05)
        let claimed = try waitForResult { survivor.claimIdle(minimumIdle: .milliseconds(1), count: 10, completion: $0) }
        #expect(claimed.entries.count == 2, "every pending entry, the live one's too, for this test")
        #expect(try waitForResult { survivor.removeDeadConsumers(completion: $0) } == ["dead"])
        #expect(consumers(redis) == ["live", "survivor"], "the live instance stays, though nothing is pending on it")
        #expect(reply(redis, "XPENDING", keys.queue("hook"), ClusterKeys.group)?.elements?.first?.integer == 2,
                "nothing pending was dropped")
    }
}
