import Foundation
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// `storerelay serve` on a real 3-primary Redis Cluster (`redis-cluster://`) while the
/// `{storerelay}` slot is resharded, and behind real sentinels (`sentinel://`) through a
/// failover with `wait-replicas 1`: Apple's notifications keep coming (a 503 is retried, as
/// Apple does), and every one answered 200 is delivered to the webhook. `storerelay check`
/// prints the topology.
@Suite(.serialized)
struct ClusterTopologyEndToEndTests {
    let ca: TestCertificateAuthority

    init() throws {
        ca = try TestCertificateAuthority()
    }

    typealias Instance = AdminGateway

    func configuration(_ url: String, options: String, sink: WebhookSink) -> String {
        Gateway.bareConfig("""
            trust-root ./test-root.pem
            cluster \(url) {
                instance-id a
                claim-after 2s
                \(options)
            }
            \(webhookDestination("hook", sink.url("/ok")))
            route * * * -> hook
            """)
    }

    func start(_ config: String) throws -> Instance {
        let directory = try Gateway.directory(trusting: ca, "storerelay-topology")
        let gateway = try Gateway(config: config, directory: directory)
        return try AdminGateway(gateway)
    }

    /// Posts fresh notifications one after the other, each until it is answered 200.
    final class Poster: @unchecked Sendable {
        // Invariant: the lists are behind the lock; the rest is set once.
        private let state = Locked<(acknowledged: [String], refused: Int, stop: Bool)>(([], 0, false))
        private let done = DispatchSemaphore(value: 0)

        init(_ post: @escaping @Sendable (String) -> Int) {
            Thread.detachNewThread { [self] in
                defer { done.signal() }
                while !state.current.stop {
                    let uuid = UUID().uuidString.lowercased()
                    while post(uuid) != 200 {
                        state.withLock { $0.refused += 1 }
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                    state.withLock { $0.acknowledged.append(uuid) }
                }
            }
        }

        var acknowledged: [String] { state.current.acknowledged }
        var refused: Int { state.current.refused }

        func stop() -> Bool {
            state.withLock { $0.stop = true }
            return done.wait(timeout: .now() + 60) == .success
        }
    }

    func poster(_ instance: Instance) -> Poster {
        let ca = ca
        return Poster { uuid in
            let body = try? TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid)
            return body.flatMap { try? instance.gateway.post(signedPayload: $0).status } ?? 0
        }
    }

    @Test(.enabled(if: RedisClusterProcesses.isAvailable, Comment(rawValue: RedisClusterProcesses.skipMessage)))
    func serveOnARedisClusterFollowsAReshard() throws {
        let cluster = try RedisClusterProcesses()
        let slot = RedisHashSlot.of("{storerelay}")
        let source = try #require(cluster.owner(of: slot))
        let target = try #require(cluster.nodes.first { $0 !== source })
        let sink = try WebhookSink(secret: testSigningSecret)
        let url = "redis-cluster://" + cluster.nodes.map { "127.0.0.1:\($0.port)" }.joined(separator: ",")
        let config = configuration(url, options: "", sink: sink)

        let directory = try Gateway.directory(trusting: ca, "storerelay-topology-check")
        try config.write(to: directory.appendingPathComponent("routes.conf"), atomically: true, encoding: .utf8)
        let check = try CommandRunner.storerelay(["check"], directory: directory)
        #expect(check.status == 0, "\(check.stderr)")
        #expect(check.stdout.contains("Cluster mode: \(url)"), "\(check.stdout)")
        #expect(check.stdout.contains("topology: Redis Cluster: slots asked of seeds"), "\(check.stdout)")

        let instance = try start(config)
        #expect(pollUntil(timeout: 10) { instance.node == "127.0.0.1:\(source.port)" }, "\(String(describing: instance.node))")
        let poster = poster(instance)
        #expect(pollUntil(timeout: 20) { poster.acknowledged.count >= 15 })
        try cluster.move(slot: slot, to: target, batch: 5) { Thread.sleep(forTimeInterval: 0.02) }
        let before = poster.acknowledged.count
        #expect(pollUntil(timeout: 20) { poster.acknowledged.count >= before + 15 }, "accepting again after the reshard")
        #expect(poster.stop())

        let acknowledged = poster.acknowledged
        #expect(pollUntil(timeout: 30) { acknowledged.allSatisfy { instance.deliveryState($0) == "delivered" } },
                "undelivered: \(acknowledged.filter { instance.deliveryState($0) != "delivered" })")
        #expect(sink.waitFor(timeout: 10) { Set($0.compactMap { $0["headers"]?["webhook-id"]?.stringValue }).count >= acknowledged.count })
        #expect(instance.node == "127.0.0.1:\(target.port)", "the status names the slot's new owner")
        #expect(pollUntil(timeout: 10) { ((try? target.command("CLIENT", "LIST")) ?? "").contains("name=storerelay-a-watch ") },
                "the watch (durability, silence) follows the slot too")
        let log = instance.gateway.process.logLines.joined(separator: "\n")
        #expect(log.contains("redis cluster slot moved; following it"), "\(log.suffix(3000))")
    }

    @Test(.enabled(if: RedisServerProcess.isValkeyAvailable, Comment(rawValue: RedisServerProcess.valkeySkipMessage)))
    func serveBehindSentinelsFollowsAFailover() throws {
        let deployment = try SentinelDeployment()
        let sink = try WebhookSink(secret: testSigningSecret)
        let instance = try start(configuration(deployment.url, options: "wait-replicas 1\nwait-timeout 500ms", sink: sink))
        #expect(pollUntil(timeout: 10) { instance.node == "127.0.0.1:\(deployment.primary.port)" }, "\(String(describing: instance.node))")
        let poster = poster(instance)
        #expect(pollUntil(timeout: 20) { poster.acknowledged.count >= 15 })
        try deployment.failover()
        #expect(pollUntil(timeout: 15) { instance.node == "127.0.0.1:\(deployment.replica.port)" }, "followed the failover")
        let before = poster.acknowledged.count
        // 503s until the old primary, demoted, has resynced as the new one's replica.
        #expect(pollUntil(timeout: 45) { poster.acknowledged.count >= before + 10 }, "accepting again with a replica")
        #expect(poster.stop())

        let acknowledged = poster.acknowledged
        #expect(pollUntil(timeout: 30) { acknowledged.allSatisfy { instance.deliveryState($0) == "delivered" } },
                "undelivered: \(acknowledged.filter { instance.deliveryState($0) != "delivered" })")
        #expect(poster.refused > 0, "the replica-less stretch was answered 503")
        let log = instance.gateway.process.logLines.joined(separator: "\n")
        #expect(log.contains("redis primary changed"), "\(log.suffix(3000))")
    }
}

extension AdminGateway {
    /// The server node the instance is connected to, as its status says.
    var node: String? { (try? get("/api/status"))?.json?["cluster"]?["node"]?.stringValue }
}
