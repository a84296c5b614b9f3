import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// One destination's shared queue against a real `redis-server` (issue 14, point 3): one
/// consumer group, each entry to one instance, retries through the delayed set, a dead
/// instance's entries claimed after they idle, entries deleted while pending reported.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterQueueTests {
    let keys = ClusterKeys()

    /// A connected client of `server`.
    func client(_ server: RedisServerProcess) throws -> RedisClient {
        let client = try clusterClient(server)
        pollUntil(timeout: 5, interval: 0.01) { client.isConnected }
        return client
    }

    /// A delivery's finish with nothing else to record.
    func delivered(_ id: String) -> ClusterQueue.Finish {
        ClusterQueue.Finish(state: Array(#"{"destination":"hook","state":"delivered"}"#.utf8), letter: nil, replayed: nil,
                            now: 1, recentEvents: 10)
    }

    func enqueue(_ redis: RedisClient, _ ids: [String]) throws {
        let acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(7 * 86_400))
        for id in ids {
            let done = DispatchSemaphore(value: 0)
            acknowledgement.acknowledge(notification(id, destinations: ["hook"])) { _ in done.signal() }
            done.wait()
        }
    }

    /// Two instances reading one destination share its entries: each goes to one of them;
    /// completing removes it from the stream and from the pending list.
    @Test func eachEntryGoesToOneInstanceAndLeavesWhenDone() throws {
        let server = try RedisServerProcess()
        let redis = try client(server)
        defer { redis.shutdown() }
        let a = ClusterQueue(client: redis, destination: "hook", consumer: "instance-a")
        let b = ClusterQueue(client: redis, destination: "hook", consumer: "instance-b")
        try waitForResult { a.prepare(completion: $0) }
        try waitForResult { b.prepare(completion: $0) }  // the group exists already: fine
        try enqueue(redis, (0..<10).map { "evt-\($0)" })
        let first = try waitForResult { a.read(count: 6, completion: $0) }
        let second = try waitForResult { b.read(count: 6, completion: $0) }
        #expect(first.count == 6 && second.count == 4)
        #expect(Set(first.map(\.eventId)).isDisjoint(with: second.map(\.eventId)))
        #expect(Set((first + second).map(\.eventId)) == Set((0..<10).map { "evt-\($0)" }))
        #expect(try waitForResult { a.read(count: 6, completion: $0) }.isEmpty)
        for entry in first { #expect(try waitForResult { a.finish(entry, delivered(entry.eventId), completion: $0) }) }
        // Finished already: a second finish (an instance that claimed it meanwhile) changes nothing.
        #expect(try waitForResult { b.finish(first[0], delivered(first[0].eventId), completion: $0) } == false)
        #expect(reply(redis, "XLEN", keys.queue("hook"))?.integer == 4)
        let pending = try waitForResult { completion in redis.send(RESPCommand("XPENDING", keys.queue("hook"), ClusterKeys.group)) { completion($0) } }
        #expect(pending.elements?.first?.integer == 4, "only b's four are pending")
    }

    /// A retry leaves the stream for the delayed set and comes back once due, with its
    /// attempts kept, whichever instance moves it.
    @Test func retriesWaitInTheDelayedSetUntilDue() throws {
        let server = try RedisServerProcess()
        let redis = try client(server)
        defer { redis.shutdown() }
        let a = ClusterQueue(client: redis, destination: "hook", consumer: "instance-a")
        let b = ClusterQueue(client: redis, destination: "hook", consumer: "instance-b")
        try waitForResult { a.prepare(completion: $0) }
        try enqueue(redis, ["evt-retry"])
        let entry = try #require(try waitForResult { a.read(count: 1, completion: $0) }.first)
        let progress = Array(#"{"attempts":[],"budgetStart":1}"#.utf8)
        #expect(try waitForResult { a.retry(entry, due: 2_000, progress: progress, state: Array("{}".utf8), completion: $0) })
        #expect(reply(redis, "XLEN", keys.queue("hook"))?.integer == 0)
        #expect(reply(redis, "ZCARD", keys.delayed("hook"))?.integer == 1)
        #expect(try waitForResult { b.moveDue(now: 1_999, completion: $0) } == 0, "not due yet")
        #expect(try waitForResult { b.moveDue(now: 2_000, completion: $0) } == 1)
        #expect(reply(redis, "ZCARD", keys.delayed("hook"))?.integer == 0)
        let again = try #require(try waitForResult { b.read(count: 1, completion: $0) }.first)
        #expect(again.eventId == "evt-retry")
        let loaded = try waitForResult { b.load([again], completion: $0) }
        #expect(loaded.first?.progress == progress && loaded.first?.record != nil)
        #expect(try waitForResult { b.finish(again, delivered(again.eventId), completion: $0) })
        #expect(reply(redis, "HLEN", keys.progress("hook"))?.integer == 0)
        #expect(reply(redis, "ZSCORE", keys.recent, "evt-retry") != nil, "its only delivery finished: a recent event")
    }

    /// An instance that dies leaves its entries pending; after they idle `claim-after`, another
    /// instance claims them. One still being attempted keeps its claim alive. An entry deleted
    /// while pending is reported lost.
    @Test func idleEntriesOfADeadInstanceAreClaimed() throws {
        let server = try RedisServerProcess()
        let redis = try client(server)
        defer { redis.shutdown() }
        let dead = ClusterQueue(client: redis, destination: "hook", consumer: "instance-dead")
        let slow = ClusterQueue(client: redis, destination: "hook", consumer: "instance-slow")
        let survivor = ClusterQueue(client: redis, destination: "hook", consumer: "instance-survivor")
        try waitForResult { dead.prepare(completion: $0) }
        try enqueue(redis, ["evt-a", "evt-b", "evt-c", "evt-d"])
        let abandoned = try waitForResult { dead.read(count: 2, completion: $0) }
        let running = try waitForResult { slow.read(count: 2, completion: $0) }
        #expect(abandoned.count == 2 && running.count == 2)
        // One of the dead instance's entries is deleted underneath it.
        #expect(reply(redis, "XDEL", keys.queue("hook"), abandoned[1].streamId)?.integer == 1)
        let early = try waitForResult { survivor.claimIdle(minimumIdle: .milliseconds(300), count: 10, completion: $0) }
        #expect(early.entries.isEmpty, "nothing has idled long enough yet: \(early)")
        for _ in 0..<4 {
            Thread.sleep(forTimeInterval: 0.1)
            try waitForResult { slow.keepAlive(running, completion: $0) }
        }
        let claimed = try waitForResult { survivor.claimIdle(minimumIdle: .milliseconds(300), count: 10, completion: $0) }
        #expect(claimed.entries.map(\.eventId) == [abandoned[0].eventId], "the slow instance's entries are still its own")
        // Reported by the first scan that meets it, idle or not (Redis checks that first).
        #expect(early.lost + claimed.lost == [abandoned[1].streamId])
    }
}
