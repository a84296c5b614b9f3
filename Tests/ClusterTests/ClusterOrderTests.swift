import Dispatch
import Foundation
@testable import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// `order per-subscription` with two instances sharing a real `redis-server` (SPEC "Delivery
/// controls"): whichever instance reads an event, the events of one subscription reach the
/// destination one at a time, in acceptance order.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterOrderTests {
    static let subscriptions = 5

    /// Instances `a` and `b` delivering to `ordered` and `control` (no `order`) on one sink.
    final class Pair: @unchecked Sendable {
        // Invariant: every stored property is set once in init.
        let server: RedisServerProcess
        let sink: WebhookSink
        let clients: [RedisClient]
        let instances: [ClusterDelivery]
        let acknowledgement: ClusterAcknowledgement

        init(ordered: String, control: String, options: String = "") throws {
            server = try RedisServerProcess()
            sink = try WebhookSink()
            let configuration = try GatewayConfiguration.parse(text: """
                destination ordered webhook \(sink.url(ordered)) {
                    order per-subscription
                    concurrency 8
                    backoff 150ms 150ms
                \(options)}
                destination control webhook \(sink.url(control)) {
                    concurrency 8
                    backoff 150ms 150ms
                \(options)}
                route * * * -> ordered, control
                """)
            let cluster = ClusterConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
            clients = try [clusterClient(server), clusterClient(server)]
            guard pollUntil(timeout: 5, interval: 0.01, { [clients] in clients.allSatisfy(\.isConnected) }) else {
                throw RedisServerError("the cluster clients did not connect")
            }
            let clients = clients
            instances = try ["a", "b"].enumerated().map { index, id in
                try ClusterDelivery(configuration: configuration, cluster: cluster, client: clients[index], instanceId: id,
                                    logger: .disabled, pollInterval: .milliseconds(20))
            }
            acknowledgement = ClusterAcknowledgement(client: clients[0], dedupeWindow: cluster.dedupeWindow, seal: instances[0].seal)
            for instance in instances { instance.start() }
        }

        deinit {
            for instance in instances { instance.stop(grace: .zero) {} }
            for client in clients { client.shutdown() }
        }

        /// Acknowledges events `event-0` ... in order, `event-N` of subscription `sub-(N % groups)`.
        func accept(_ count: Int, groups: Int) {
            for n in 0..<count {
                var stored = notification("event-\(n)", destinations: ["ordered", "control"], subscription: "sub-\(n % groups)")
                stored.receivedAt = .now()
                let done = DispatchSemaphore(value: 0)
                acknowledgement.acknowledge(stored) { _ in done.signal() }
                done.wait()
            }
        }
    }

    @Test func eachSubscriptionArrivesInOrderAcrossTwoInstancesWhileTheControlReorders() throws {
        let ordered = "/fail-every/3/2/ordered", control = "/fail-every/3/2/control"
        let pair = try Pair(ordered: ordered, control: control)
        let events = 40
        pair.accept(events, groups: Self.subscriptions)
        let total = { (path: String) in pair.sink.successes(path: path, groups: Self.subscriptions).values.map(\.count).reduce(0, +) }
        #expect(pair.sink.waitFor(timeout: 40) { _ in total(ordered) == events && total(control) == events })
        for (subscription, numbers) in pair.sink.successes(path: ordered, groups: Self.subscriptions) {
            #expect(numbers == Array(stride(from: subscription, to: events, by: Self.subscriptions)), "subscription \(subscription)")
        }
        #expect(pair.sink.successes(path: control, groups: Self.subscriptions).values.contains { $0 != $0.sorted() })
        // Nothing is left behind on the server once every subscription is done.
        let turns = try waitForResult { pair.clients[0].send(RESPCommand("HLEN", ClusterKeys().turns("ordered")), completion: $0) }
        #expect(turns.integer == 0)
    }

    @Test func aDeadLetteredEventReleasesTheNextWithTheGap() throws {
        let path = "/fail-every/4/99/gap"
        let pair = try Pair(ordered: path, control: "/ok", options: "    max-attempts 2\n")
        pair.accept(8, groups: 2)
        #expect(pair.sink.waitFor(timeout: 30) { requests in
            requests.filter { $0["path"]?.stringValue == path && !["event-0", "event-4"].contains($0["headers"]?["webhook-id"]?.stringValue) }.count == 6
        })
        let requests = pair.sink.requests(path: path)
        func gap(_ id: String) -> String? {
            requests.first { $0["headers"]?["webhook-id"]?.stringValue == id }?["headers"]?["storerelay-ordering-gap"]?.stringValue
        }
        #expect(gap("event-2") == "event-0" && gap("event-6") == "event-4")
        #expect(gap("event-1") == nil && gap("event-3") == nil)
        let sub0 = requests.compactMap { $0["headers"]?["webhook-id"]?.stringValue }.filter { ["event-0", "event-2", "event-4", "event-6"].contains($0) }
        #expect(sub0 == ["event-0", "event-0", "event-2", "event-4", "event-4", "event-6"])
    }
}
