import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Cluster mode's acceptance against a real `redis-server` (issue 14, point 2): the
/// durability check, and the one atomic script that dedupes, stores and enqueues.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterAcknowledgementTests {
    let keys = ClusterKeys()

    func acknowledge(_ acknowledgement: ClusterAcknowledgement, _ id: String,
                     destinations: [String] = ["billing", "crm"]) -> ClusterAcknowledgement.Outcome {
        let outcome = Locked<ClusterAcknowledgement.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        acknowledgement.acknowledge(notification(id, destinations: destinations)) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.current!
    }

    /// A server that could lose an acknowledged write is refused with the setting named.
    @Test func aServerWithoutAppendOnlyAlwaysIsRefused() throws {
        let volatile = try RedisServerProcess(durable: false)
        let refused = try clusterClient(volatile)
        defer { refused.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { refused.lastError != nil })
        #expect(refused.lastError?.message.contains("appendonly no") == true, "\(String(describing: refused.lastError))")
        #expect(!refused.isConnected)

        let everySecond = try RedisServerProcess(extraArguments: ["--appendfsync", "everysec"])
        let lax = try clusterClient(everySecond)
        defer { lax.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { lax.lastError != nil })
        #expect(lax.lastError?.message.contains("appendfsync everysec") == true, "\(String(describing: lax.lastError))")

        let durable = try RedisServerProcess()
        let accepted = try clusterClient(durable)
        defer { accepted.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { accepted.isConnected })
        #expect(ServerDurability().refusal([.error("ERR unknown command 'CONFIG'"), .array([]), .array([])])?.contains("require-aof no") == true)
    }

    /// Stored once with the window as TTL, enqueued on each routed destination's stream; the
    /// same id again (Apple's retry, or another instance) is a duplicate and enqueues nothing.
    @Test func storesOnceAndEnqueuesOnEveryDestination() async throws {
        let server = try RedisServerProcess()
        let redis = try clusterClient(server)
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { redis.isConnected })
        let acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(14 * 86_400))
        #expect(acknowledge(acknowledgement, "evt-1") == .stored)
        #expect(acknowledge(acknowledgement, "evt-1") == .duplicate)
        for destination in ["billing", "crm"] {
            #expect(reply(redis, "XLEN", keys.queue(destination))?.integer == 1)
        }
        let stored = try #require(reply(redis, "GET", keys.event("evt-1"))?.bytes.flatMap(StoredNotification.init(decoding:)))
        #expect(stored.id == "evt-1" && stored.destinations == ["billing", "crm"])
        #expect(reply(redis, "HGET", keys.state("evt-1"), "_remaining")?.integer == 2)
        let ttl = reply(redis, "TTL", keys.seen("evt-1"))?.integer ?? 0
        #expect(ttl > 14 * 86_400 - 60 && ttl <= 14 * 86_400)

        // Unrouted: a dead letter at once, on no destination's stream, and a recent event.
        #expect(acknowledge(acknowledgement, "evt-2", destinations: []) == .stored)
        let letters = ClusterDeadLetters(client: redis)
        let letter = try #require(await letters.list(DeadLetterQuery(), limit: 10, cursor: nil).items.first)
        #expect(letter.eventId == "evt-2" && letter.reason == .unrouted && letter.destination == nil)
        #expect(await letters.countsByDestination == [nil: 1])
        #expect(reply(redis, "XLEN", keys.queue("billing"))?.integer == 1)
        #expect(reply(redis, "ZSCORE", keys.recent, "evt-2") != nil)

        // Every key is in one hash slot, as a Redis or Valkey cluster requires of one script.
        let slots = Set([keys.seen("a"), keys.event("b"), keys.queue("c"), keys.letters, keys.state("d"), keys.recent].compactMap {
            reply(redis, "CLUSTER", "KEYSLOT", $0)?.integer
        })
        #expect(slots.count <= 1)
    }

    /// Two instances racing on one id: exactly one stores it.
    @Test func concurrentInstancesStoreAnIdOnce() throws {
        let server = try RedisServerProcess()
        let first = try clusterClient(server), second = try clusterClient(server)
        defer { first.shutdown(); second.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { first.isConnected && second.isConnected })
        let instances = [first, second].map { ClusterAcknowledgement(client: $0, dedupeWindow: .seconds(7 * 86_400)) }
        let outcomes = Locked<[ClusterAcknowledgement.Outcome]>([])
        DispatchQueue.concurrentPerform(iterations: 200) { index in
            let outcome = acknowledge(instances[index % 2], "race-\(index / 2)", destinations: ["billing"])
            outcomes.withLock { $0.append(outcome) }
        }
        #expect(outcomes.current.filter { $0 == .stored }.count == 100)
        #expect(outcomes.current.filter { $0 == .duplicate }.count == 100)
        #expect(reply(first, "XLEN", keys.queue("billing"))?.integer == 100)
    }

    /// Acknowledgements take turns over every connected lane (each connection's last command
    /// on the server is the script), and a lane that is not connected is passed over.
    @Test func acknowledgementsSpreadOverConnectedLanes() throws {
        let server = try RedisServerProcess()
        let shared = try clusterClient(server), lanes = try (0..<2).map { _ in try clusterClient(server) }
        let idle = RedisClient(configuration: RedisConfiguration(url: try RedisURL.parse("redis://127.0.0.1:1")))
        let observer = try clusterClient(server)
        defer { for client in [shared, observer] + lanes { client.shutdown() } }
        #expect(pollUntil(timeout: 5, interval: 0.01) { ([shared, observer] + lanes).allSatisfy(\.isConnected) })
        let acknowledgement = ClusterAcknowledgement(client: shared, lanes: lanes + [idle], dedupeWindow: .seconds(86_400))
        for index in 0..<12 {
            #expect(acknowledge(acknowledgement, "lane-\(index)", destinations: ["billing"]) == .stored)
        }
        #expect(reply(observer, "XLEN", keys.queue("billing"))?.integer == 12)
        let scripts = (reply(observer, "CLIENT", "LIST")?.string ?? "").split(separator: "\n").filter { $0.contains("cmd=evalsha") }
        #expect(scripts.count == 3, "every connected lane ran acknowledgements: \(scripts)")
    }

    /// Without the server nothing is acknowledged; once it is back (its append-only file
    /// kept every acknowledged id), acceptance resumes and remembers.
    @Test func withoutTheServerNothingIsAcknowledged() throws {
        let server = try RedisServerProcess()
        let redis = try clusterClient(server)
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { redis.isConnected })
        let acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(7 * 86_400))
        #expect(acknowledge(acknowledgement, "before") == .stored)
        server.stop()
        #expect(pollUntil(timeout: 5, interval: 0.01) { !redis.isConnected })
        guard case .unavailable = acknowledge(acknowledgement, "during") else {
            Issue.record("acknowledged while the server was down")
            return
        }
        try server.restart()
        #expect(pollUntil(timeout: 10) { redis.isConnected })
        #expect(acknowledge(acknowledgement, "before") == .duplicate, "the append-only file kept it")
        #expect(acknowledge(acknowledgement, "during") == .stored)
    }

    /// `wait-replicas` needs WAITAOF (Redis 7.2, Valkey): short of it, never a 200.
    @Test func waitReplicasShortOfItsCountIsUnavailable() throws {
        let server = try RedisServerProcess()
        let redis = try clusterClient(server)
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { redis.isConnected })
        let acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: .seconds(7 * 86_400), waitReplicas: 1,
                                                     waitTimeout: .milliseconds(200))
        guard case .unavailable(let why) = acknowledge(acknowledgement, "replicated") else {
            Issue.record("acknowledged without a replica")
            return
        }
        // Redis 7.0 has no WAITAOF; a newer server has it but no replica here.
        #expect(why.contains("WAITAOF"), "\(why)")
    }

    /// Whether `delivery` took the lease, waited for.
    func takeLease(_ delivery: ClusterDelivery, _ name: String, for duration: Duration) -> Bool {
        (try? waitForResult { completion in delivery.takeLease(name, for: duration) { completion(.success($0)) } }) ?? false
    }

    /// A lease (reconciliation's, in cluster mode) is held by one instance at a time, until it
    /// expires.
    @Test func oneInstanceAtATimeHoldsALease() throws {
        let server = try RedisServerProcess()
        let redis = try clusterClient(server)
        defer { redis.shutdown() }
        #expect(pollUntil(timeout: 5, interval: 0.01) { redis.isConnected })
        let cluster = ClusterConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
        let (a, b) = try (ClusterDelivery(configuration: GatewayConfiguration(), cluster: cluster, client: redis, instanceId: "a", logger: .disabled),
                          ClusterDelivery(configuration: GatewayConfiguration(), cluster: cluster, client: redis, instanceId: "b", logger: .disabled))
        #expect(takeLease(a, "reconcile:com.acme.journal:production", for: .milliseconds(300)))
        #expect(!takeLease(b, "reconcile:com.acme.journal:production", for: .milliseconds(300)))
        #expect(takeLease(b, "reconcile:com.acme.journal:sandbox", for: .milliseconds(300)), "another lease is free")
        #expect(pollUntil(timeout: 5) { takeLease(b, "reconcile:com.acme.journal:production", for: .seconds(10)) })
        #expect(!takeLease(a, "reconcile:com.acme.journal:production", for: .seconds(10)))
    }
}
