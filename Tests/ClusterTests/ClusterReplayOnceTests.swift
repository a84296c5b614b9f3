import Dispatch
import Foundation
@testable import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Issue 26, point 3, against a real `redis-server`: bulk replays started on two instances
/// together delivered letters twice, because the replay script never checked the letter
/// was still there. A letter is now replayed once.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterReplayOnceTests {
    /// A server, a sink, and instances `a` and `b` delivering `hook`, which every route names,
    /// to the sink. Dead letters are made unrouted (acknowledged for no destination): their
    /// replays are routed to `hook` and delivered.
    final class Pair: @unchecked Sendable {
        // Invariant: every stored property is set once in init.
        let server: RedisServerProcess
        let sink: WebhookSink
        let clients: [RedisClient]
        let a: ClusterDelivery
        let b: ClusterDelivery
        let acknowledgement: ClusterAcknowledgement

        init() throws {
            server = try RedisServerProcess()
            sink = try WebhookSink()
            let configuration = try GatewayConfiguration.parse(text: """
                destination hook webhook \(sink.url("/ok")) {
                    concurrency 8
                }
                route * * * -> hook
                """)
            var cluster = ClusterConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
            cluster.clusterKeys = [ConfigSecret(ClusterIntegrityTests.key)]
            clients = try [clusterClient(server), clusterClient(server)]
            guard pollUntil(timeout: 5, interval: 0.01, { [clients] in clients.allSatisfy(\.isConnected) }) else {
                throw RedisServerError("the cluster clients did not connect")
            }
            a = try ClusterDelivery(configuration: configuration, cluster: cluster, client: clients[0], instanceId: "a", logger: .disabled,
                                    pollInterval: .milliseconds(20))
            b = try ClusterDelivery(configuration: configuration, cluster: cluster, client: clients[1], instanceId: "b", logger: .disabled,
                                    pollInterval: .milliseconds(20))
            acknowledgement = ClusterAcknowledgement(client: clients[0], dedupeWindow: cluster.dedupeWindow, seal: a.seal)
            a.start()
            b.start()
        }

        deinit {
            a.stop(grace: .zero) {}
            b.stop(grace: .zero) {}
            for client in clients { client.shutdown() }
        }

        /// `count` events acknowledged for no destination: as many unrouted dead letters.
        func deadLetters(_ count: Int) -> [String] {
            let ids = (0..<count).map { "evt-\($0)" }
            for id in ids {
                let done = DispatchSemaphore(value: 0)
                acknowledgement.acknowledge(receivedNow(id, destinations: [])) { _ in done.signal() }
                done.wait()
            }
            return ids.map { DeadLetter.id(eventId: $0, destination: nil) }
        }

        var letterCount: Int {
            get async { await a.deadLetters.countsByDestination[nil] ?? 0 }
        }

        /// Requests the sink received, by webhook-id.
        var requestsByEvent: [String: Int] {
            sink.requests.reduce(into: [:]) { counts, request in
                counts[request["headers"]?["webhook-id"]?.stringValue ?? "", default: 0] += 1
            }
        }
    }

    /// `b` read a letter; `a` replayed it and the replay was delivered (the letter is gone);
    /// then `b`'s replay of what it read runs: it must not queue the event again.
    @Test func aLetterReadBeforeItsReplayWasDeliveredIsNotReplayedAgain() async throws {
        let pair = try Pair()
        let letter = try #require(pair.deadLetters(1).first)
        let read = try #require(await pair.b.deadLetters.stored(id: letter))
        #expect(await pair.a.replay(deadLetterId: letter) == .replayed(destinations: ["hook"]))
        #expect(await pollUntil(timeout: 20) { await pair.a.deadLetters.letter(id: letter) == nil }, "the replay was delivered")
        #expect(await pair.b.replay(read.letter, read: read.bytes, force: false) == .notFound)
        try? await Task.sleep(for: .seconds(0.5))
        #expect(pair.requestsByEvent == ["evt-0": 1], "delivered once: \(pair.requestsByEvent)")
    }

    /// Bulk replays on both instances at once: every letter is replayed, and delivered, once.
    @Test func bulkReplaysOnTwoInstancesTogetherReplayEachLetterOnce() async throws {
        let pair = try Pair()
        let letters = pair.deadLetters(60)
        #expect(await pair.letterCount == 60 && letters.count == 60)
        let results = Locked<[BulkReplayResult]>([])
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                let instance = index % 2 == 0 ? pair.a : pair.b
                group.addTask {
                    let result = await instance.replayAll(DeadLetterQuery())
                    results.withLock { $0.append(result) }
                }
            }
        }
        #expect(await pollUntil(timeout: 30) { await pair.letterCount == 0 })
        try? await Task.sleep(for: .seconds(1))
        let replayed = results.current.map(\.replayed).reduce(0, +)
        #expect(replayed == 60, "each letter replayed once: \(results.current)")
        let counts = pair.requestsByEvent
        #expect(counts.count == 60 && counts.values.allSatisfy { $0 == 1 }, "\(counts.filter { $0.value != 1 })")
    }
}

/// Review point 4: the `replaying:` marker lived 24 h, the default `max-age` 72 h. A second
/// bulk replay on day 2, the destination still down, queued the event a second time beside
/// the first replay's retry: two deliveries sharing one progress field and delayed member.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterReplayMarkerTests {
    let keys = ClusterKeys()

    @Test func aSecondReplayWhileTheFirstStillRetriesIsRefused() async throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink()
        let client = try clusterClient(server)
        defer { client.shutdown() }
        #expect(pollUntil(timeout: 5) { client.isConnected })
        let configuration = try GatewayConfiguration.parse(text: """
            destination hook webhook \(sink.url("/flaky/1000")) {
                backoff 10m 10m
            }
            route * * * -> hook
            """)
        var cluster = ClusterConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
        cluster.clusterKeys = [ConfigSecret(ClusterIntegrityTests.key)]
        let delivery = try ClusterDelivery(configuration: configuration, cluster: cluster, client: client, instanceId: "a",
                                           logger: .disabled, pollInterval: .milliseconds(20))
        delivery.start()
        defer { delivery.stop(grace: .zero) {} }
        let acknowledgement = ClusterAcknowledgement(client: client, dedupeWindow: cluster.dedupeWindow, seal: delivery.seal)
        let done = DispatchSemaphore(value: 0)
        acknowledgement.acknowledge(receivedNow("down-1", destinations: [])) { _ in done.signal() }
        done.wait()
        let letter = DeadLetter.id(eventId: "down-1", destination: nil)

        #expect(await delivery.replay(deadLetterId: letter) == .replayed(destinations: ["hook"]))
        let marker = keys.replaying(letter)
        #expect((reply(client, "TTL", marker)?.integer ?? 0) > 95 * 3_600, "past the 72 h max-age, by a day")
        // The first attempt failed: waiting in the delayed set, 10 minutes out.
        #expect(pollUntil(timeout: 10) { reply(client, "ZCARD", keys.delayed("hook"))?.integer == 1 })

        // The marker gone (as its 24 h TTL did on day 2): the progress still refuses.
        #expect(reply(client, "DEL", marker)?.integer == 1)
        #expect(await delivery.replay(deadLetterId: letter) == .alreadyReplaying)
        #expect(await delivery.replayAll(DeadLetterQuery()) == BulkReplayResult())
        #expect(reply(client, "XLEN", keys.queue("hook"))?.integer == 0)
        #expect(reply(client, "ZCARD", keys.delayed("hook"))?.integer == 1)
        #expect(reply(client, "HGET", keys.state("down-1"), "_remaining")?.integer == 1)
        #expect(sink.requests.count == 1)
    }
}
