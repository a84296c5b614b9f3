import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Issue 25, points 6 and 12, in cluster mode: its dead letters live on the server, and its
/// replays follow single-node mode's rules (`ReplayScopeTests`, `NotUnderstoodSearchTests`).
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterReplayScopeTests {
    let keys = ClusterKeys()
    static let forty: Duration = .seconds(40 * 86_400)

    /// A server, a client of it, and this instance's delivery over a file destination `all`
    /// that every route names (its consumers are not started: replays only queue).
    final class Harness {
        let server: RedisServerProcess
        let redis: RedisClient
        let delivery: ClusterDelivery
        let acknowledgement: ClusterAcknowledgement

        init() throws {
            server = try RedisServerProcess()
            redis = try clusterClient(server)
            guard pollUntil(timeout: 5, interval: 0.01, { [redis] in redis.isConnected }) else {
                throw RedisServerError("the cluster client did not connect")
            }
            let directory = try TestPaths.makeTemporaryDirectory("storerelay-cluster-replay")
            let configuration = try GatewayConfiguration.parse(text: """
                destination all file \(directory.appendingPathComponent("queue").path)
                route * * * -> all
                """)
            let cluster = ClusterConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"), dedupeWindow: .seconds(14 * 86_400))
            delivery = try ClusterDelivery(configuration: configuration, cluster: cluster, client: redis, instanceId: "a", logger: .disabled)
            acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: cluster.dedupeWindow)
        }

        deinit { redis.shutdown() }

        /// Acknowledges `notification`, which leaves a dead letter (unrouted or quarantined).
        func keep(_ notification: StoredNotification) -> String {
            let done = DispatchSemaphore(value: 0)
            acknowledgement.acknowledge(notification) { _ in done.signal() }
            done.wait()
            return DeadLetter.id(eventId: notification.id, destination: nil)
        }

        func isReplaying(_ letterId: String) -> Bool {
            reply(redis, "EXISTS", ClusterKeys().replaying(letterId))?.integer == 1
        }
    }

    func quarantined(_ id: String, signedAgo: Duration = .seconds(60), reason: String) -> StoredNotification {
        var stored = notification(id, destinations: [], signedAgo: signedAgo)
        stored.disposition = .quarantine(reason: reason)
        return stored
    }

    @Test func bulkReplaysLeaveQuarantinedOutAndReplaysReapplyStaleness() async throws {
        let harness = try Harness()
        let unrouted = harness.keep(notification("unrouted", destinations: []))
        let oldUnrouted = harness.keep(notification("old-unrouted", destinations: [], signedAgo: Self.forty))
        let misplaced = harness.keep(quarantined("misplaced", reason: "app com.other.app is not declared"))
        let stale = harness.keep(quarantined("stale", signedAgo: Self.forty, reason: "stale: signed long ago"))

        #expect(await harness.delivery.replayAll(DeadLetterQuery()) == BulkReplayResult(replayed: 1, stale: 1))
        #expect(harness.isReplaying(unrouted))
        #expect(!harness.isReplaying(oldUnrouted) && !harness.isReplaying(misplaced) && !harness.isReplaying(stale))

        #expect(await harness.delivery.replayAll(DeadLetterQuery(reason: .stored(.quarantined))) == BulkReplayResult(replayed: 1, stale: 1))
        #expect(harness.isReplaying(misplaced) && !harness.isReplaying(stale))

        guard case .stale(let reason) = await harness.delivery.replay(deadLetterId: stale) else {
            Issue.record("a notification signed 40 days ago was replayed without force")
            return
        }
        #expect(reason.contains("before the 14d dedupe-window"), "\(reason)")
        #expect(await harness.delivery.replay(deadLetterId: stale, force: true) == .replayed(destinations: ["all"]))
        #expect(await harness.delivery.replayAll(DeadLetterQuery(), force: true) == BulkReplayResult(replayed: 1, stale: 0))
        #expect(harness.isReplaying(oldUnrouted))
    }

    @Test func notUnderstoodLettersAreFilterableAndFoundByTheirTransactionIds() async throws {
        let harness = try Harness()
        let nested = try NestedDataNotification(uuid: "nested-1", transactionId: "2000000777000001",
                                                originalTransactionId: "2000000777000000")
        let unreadable = harness.keep(StoredNotification(event: nested.event, disposition: .quarantine(reason: nested.reason),
                                                         destinations: [], body: nested.body, receivedAt: .now()))
        let misplaced = harness.keep(quarantined("misplaced", reason: "app com.other.app is not declared"))
        let letters = harness.delivery.deadLetters
        func ids(_ query: DeadLetterQuery) async -> Set<String> { await Set(letters.list(query, limit: 100, cursor: nil).items.map(\.id)) }
        #expect(await ids(DeadLetterQuery(reason: .notUnderstood)) == [unreadable])
        #expect(await ids(DeadLetterQuery(reason: .stored(.quarantined))) == [unreadable, misplaced])
        #expect(await ids(DeadLetterQuery(transactionId: "2000000777000001")) == [unreadable])
        #expect(await ids(DeadLetterQuery(originalTransactionId: "2000000777000000")) == [unreadable])
    }
}
