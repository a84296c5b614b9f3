import Dispatch
import Foundation
@testable import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Review of the cluster changes, points 1 and 2, against a real `redis-server`: a record
/// that fails an instance's `cluster-key` check may be genuine (sealed with a key that
/// instance lacks during a rotation, or written before the key and met after `unsealed` was
/// dropped) and the only copy of an acknowledged notification. It is kept aside, never
/// discarded, and a replay once the keys are right delivers it.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterKeyRotationTests {
    static let old = "old-cluster-key-for-tests-0123456789abcdef"
    static let new = "new-cluster-key-for-tests-0123456789abcdef"
    let keys = ClusterKeys()

    /// A server and a sink; instances made on demand, each with its own keys, delivering
    /// `hook` (which every route names) to the sink.
    final class Cluster: @unchecked Sendable {
        // Invariant: `instances` and `clients` are only touched from the test's thread.
        let server: RedisServerProcess
        let sink: WebhookSink
        let redis: RedisClient
        let observer = ClusterIntegrityTests.Observer()
        let configuration: GatewayConfiguration
        var instances: [ClusterDelivery] = []
        var clients: [RedisClient] = []

        /// - Parameter path: the sink's path `hook` posts to (`/bad`: every attempt rejected).
        init(path: String = "/ok") throws {
            server = try RedisServerProcess()
            sink = try WebhookSink()
            redis = try clusterClient(server)
            guard pollUntil(timeout: 5, interval: 0.01, { [redis] in redis.isConnected }) else {
                throw RedisServerError("the cluster client did not connect")
            }
            configuration = try GatewayConfiguration.parse(text: """
                destination hook webhook \(sink.url(path)) {
                    backoff 50ms 200ms
                }
                route * * * -> hook
                """)
        }

        deinit {
            for instance in instances { instance.stop(grace: .zero) {} }
            for client in clients + [redis] { client.shutdown() }
        }

        /// An instance with `cluster-key` set to `keys` (and `unsealed`), started unless not.
        func instance(_ id: String, keys: [String], unsealed: Bool = false, start: Bool = true) throws -> ClusterDelivery {
            let client = try clusterClient(server)
            guard pollUntil(timeout: 5, interval: 0.01, { client.isConnected }) else { throw RedisServerError("no connection") }
            var cluster = ClusterConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
            cluster.clusterKeys = keys.map { ConfigSecret($0) }
            cluster.acceptsUnsealed = unsealed
            let delivery = try ClusterDelivery(configuration: configuration, cluster: cluster, client: client, instanceId: id,
                                               logger: .disabled, observer: observer, pollInterval: .milliseconds(50))
            if start { delivery.start() }
            clients.append(client)
            instances.append(delivery)
            return delivery
        }

        /// Acknowledges `stored` as an instance sealing with `seal` does.
        func acknowledge(_ stored: StoredNotification, seal: ClusterSeal) {
            let acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(14 * 86_400), seal: seal)
            let done = DispatchSemaphore(value: 0)
            acknowledgement.acknowledge(stored) { _ in done.signal() }
            done.wait()
        }

        func stop(_ instance: ClusterDelivery) {
            let done = DispatchSemaphore(value: 0)
            instance.stop(grace: .zero) { done.signal() }
            done.wait()
        }

        /// Bodies the sink received, by the event id they carry.
        var delivered: [String] {
            sink.requests.compactMap { request in
                request["body"]?.stringValue.flatMap { try? JSONValue.parse($0) }?["id"]?.stringValue
            }
        }
    }

    func hget(_ cluster: Cluster, _ key: String, _ field: String) -> [UInt8]? {
        reply(cluster.redis, "HGET", key, field)?.bytes
    }

    /// The rolling restart README described: one instance already on `NEW OLD` seals with
    /// NEW; one still on OLD alone cannot open that record and dead-letters it `tampered`.
    /// The record is kept aside; a replay from an instance with both keys delivers it.
    @Test func aRecordSealedWithAKeyAnInstanceLacksIsDeliveredByAReplayOnceItHasTheKey() async throws {
        let cluster = try Cluster()
        let behind = try cluster.instance("behind", keys: [Self.old])
        cluster.acknowledge(receivedNow("rotated-1", destinations: ["hook"]), seal: ClusterSeal(keys: [Self.new, Self.old]))
        behind.nudge(["hook"])
        #expect(pollUntil(timeout: 20) { cluster.observer["tampered:event"] == 1 }, "\(cluster.observer.counts.current)")
        let letterId = DeadLetter.id(eventId: "rotated-1", destination: "hook")
        #expect(await pollUntil(timeout: 5) { await behind.deadLetters.letter(id: letterId)?.reason == .tampered })
        #expect(cluster.delivered.isEmpty)
        // Kept aside, as read.
        let aside = try #require(hget(cluster, keys.tamperedLetters, letterId + ":event"))
        #expect(String(decoding: aside, as: UTF8.self).hasPrefix("sr1."))
        // Still behind: not replayed, nothing lost.
        #expect(await behind.replay(deadLetterId: letterId) == .tampered)
        #expect(hget(cluster, keys.tamperedLetters, letterId + ":event") == aside)

        cluster.stop(behind)
        let caughtUp = try cluster.instance("caught-up", keys: [Self.new, Self.old])
        #expect(await caughtUp.replay(deadLetterId: letterId) == .replayed(destinations: ["hook"]))
        #expect(cluster.sink.waitFor { $0.count == 1 })
        #expect(cluster.delivered == ["rotated-1"])
        #expect(await pollUntil(timeout: 10) { await caughtUp.deadLetters.letter(id: letterId) == nil }, "the letter leaves once delivered")
        #expect(reply(cluster.redis, "HLEN", keys.tamperedLetters)?.integer == 0, "and what it stood in for with it")
    }

    /// A genuine dead letter sealed with a key this instance lacks: its replay here moves it
    /// aside (it was replaced by an id-only stub before), and a replay with the key delivers it.
    @Test func aGenuineLetterFailingTheCheckIsKeptAsideAndReplayedOnceItChecksOut() async throws {
        let cluster = try Cluster()
        let caughtUp = try cluster.instance("caught-up", keys: [Self.new, Self.old])
        cluster.acknowledge(receivedNow("lost-1", destinations: []), seal: caughtUp.seal)
        let letterId = DeadLetter.id(eventId: "lost-1", destination: nil)
        let original = try #require(hget(cluster, keys.letters, letterId))

        let behind = try cluster.instance("behind", keys: [Self.old], start: false)
        #expect(await behind.replay(deadLetterId: letterId, force: true) == .tampered)
        #expect(cluster.observer["tampered:letter"] == 1)
        #expect(hget(cluster, keys.tamperedLetters, letterId) == original, "the letter kept aside as it was")
        #expect(await behind.deadLetters.letter(id: letterId)?.reason == .tampered, "a sealed tampered letter listed in its place")
        // Met again by the instance behind: refused, not counted again, nothing lost.
        #expect(await behind.replay(deadLetterId: letterId, force: true) == .tampered)
        #expect(cluster.observer["tampered:letter"] == 1)
        #expect(hget(cluster, keys.tamperedLetters, letterId) == original)

        #expect(await caughtUp.replay(deadLetterId: letterId, force: true) == .replayed(destinations: ["hook"]))
        #expect(cluster.sink.waitFor { $0.count == 1 })
        #expect(cluster.delivered == ["lost-1"])
        #expect(await pollUntil(timeout: 10) { await caughtUp.deadLetters.letter(id: letterId) == nil })
        #expect(reply(cluster.redis, "HLEN", keys.tamperedLetters)?.integer == 0)
    }

    /// A genuine letter written under the id between a replay's read (of a letter that failed)
    /// and its rewrite is not clobbered: the replay reads again, and replays the genuine one.
    @Test func aGenuineLetterWrittenAfterTheReadIsNotClobbered() async throws {
        let cluster = try Cluster()
        let instance = try cluster.instance("a", keys: [Self.new])
        cluster.acknowledge(receivedNow("lost-2", destinations: []), seal: instance.seal)
        let letterId = DeadLetter.id(eventId: "lost-2", destination: nil)
        let genuine = try #require(hget(cluster, keys.letters, letterId))
        // Read while it failed (written without a seal)...
        let unsealed = Array(genuine.dropFirst(69))
        #expect(reply(cluster.redis, "HSET", keys.letters, letterId, String(decoding: unsealed, as: UTF8.self)) != nil)
        let read = try #require(await instance.deadLetters.stored(id: letterId))
        #expect(read.letter.reason == .tampered)
        // ...and the genuine letter written again before the rewrite.
        #expect(reply(cluster.redis, "HSET", keys.letters, letterId, String(decoding: genuine, as: UTF8.self)) != nil)
        #expect(await instance.replay(read.letter, read: read.bytes, force: true) == .replayed(destinations: ["hook"]))
        #expect(cluster.sink.waitFor { $0.count == 1 })
        #expect(cluster.delivered == ["lost-2"])
        #expect(reply(cluster.redis, "HLEN", keys.tamperedLetters)?.integer == 0, "nothing was set aside")
    }

    /// The replay of a genuine letter, delivered by an instance that cannot open what the
    /// replay sealed: the letter stays as it was (no tampered stub over it) and its replay is
    /// over (the `replaying:` marker gone, though the progress naming it could not be read),
    /// so it can be replayed again at once.
    @Test func aTamperedVerdictOnAReplayLeavesTheLetterReplayable() async throws {
        let cluster = try Cluster(path: "/bad")
        let caughtUp = try cluster.instance("caught-up", keys: [Self.new, Self.old])
        cluster.acknowledge(receivedNow("rejected-1", destinations: ["hook"]), seal: caughtUp.seal)
        caughtUp.nudge(["hook"])
        let letterId = DeadLetter.id(eventId: "rejected-1", destination: "hook")
        #expect(await pollUntil(timeout: 20) { await caughtUp.deadLetters.letter(id: letterId)?.reason == .rejected })
        let letter = try #require(hget(cluster, keys.letters, letterId))
        cluster.stop(caughtUp)

        let behind = try cluster.instance("behind", keys: [Self.old])
        #expect(await caughtUp.replay(deadLetterId: letterId) == .replayed(destinations: ["hook"]))
        #expect(pollUntil(timeout: 20) { cluster.observer["tampered:event"] == 1 }, "\(cluster.observer.counts.current)")
        #expect(pollUntil(timeout: 5) { reply(cluster.redis, "EXISTS", keys.replaying(letterId))?.integer == 0 })
        #expect(hget(cluster, keys.letters, letterId) == letter, "the genuine letter stays as it was")
        #expect(hget(cluster, keys.tamperedLetters, letterId + ":event") != nil)
        cluster.stop(behind)

        let again = try cluster.instance("again", keys: [Self.new, Self.old])
        #expect(await again.replay(deadLetterId: letterId) == .replayed(destinations: ["hook"]))
        #expect(cluster.sink.waitFor { $0.count == 2 }, "attempted again (and rejected again)")
    }

    /// While `unsealed` is set, records written before the key (a dead letter, a queued
    /// event's record) are sealed in place: dropping `unsealed` then loses none of them.
    @Test func theUnsealedPhaseSealsOlderRecordsInPlace() async throws {
        let cluster = try Cluster()
        cluster.acknowledge(receivedNow("before-key-letter", destinations: []), seal: .off)
        cluster.acknowledge(receivedNow("before-key-event", destinations: ["hook"]), seal: .off)
        let letterId = DeadLetter.id(eventId: "before-key-letter", destination: nil)
        #expect(hget(cluster, keys.letters, letterId)?.first == UInt8(ascii: "{"))

        let turningOn = try cluster.instance("turning-on", keys: [Self.new], unsealed: true, start: false)
        #expect(await turningOn.resealer.pass() == 2, "the letter and the queued event's record")
        #expect(await turningOn.resealer.pass() == 0, "once")
        let strict = ClusterSeal(keys: [Self.new])
        let letter = try #require(hget(cluster, keys.letters, letterId))
        let record = try #require(reply(cluster.redis, "GET", keys.event("before-key-event"))?.bytes)
        #expect(strict.open(letter, .letter, letterId).failure == nil)
        #expect(strict.open(record, .event, "before-key-event").failure == nil)

        // `unsealed` dropped: delivered and replayed, nothing tampered.
        let sealedOnly = try cluster.instance("sealed-only", keys: [Self.new])
        sealedOnly.nudge(["hook"])
        #expect(cluster.sink.waitFor { $0.count == 1 })
        #expect(await sealedOnly.replay(deadLetterId: letterId, force: true) == .replayed(destinations: ["hook"]))
        #expect(cluster.sink.waitFor { $0.count == 2 })
        #expect(Set(cluster.delivered) == ["before-key-event", "before-key-letter"])
        #expect(cluster.observer["tampered"] == 0, "\(cluster.observer.counts.current)")
    }
}
