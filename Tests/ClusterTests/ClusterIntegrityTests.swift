import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// `notification(id, destinations:)` received now, so delivery's `max-age` has not passed.
func receivedNow(_ id: String, destinations: [String]) -> StoredNotification {
    var stored = notification(id, destinations: destinations)
    stored.receivedAt = .now()
    return stored
}

/// Issue 26, point 1, against a real `redis-server`: nothing the server did not get from an
/// instance is delivered or replayed. Records are written straight into the server, as
/// anyone with write access to it could.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterIntegrityTests {
    static let key = "cluster-key-for-tests-0123456789abcdef"
    let keys = ClusterKeys()

    /// Counts what the delivery tells its observer.
    final class Observer: DeliveryObserver, @unchecked Sendable {
        // Invariant: only touched through `counts`, a lock.
        let counts = Locked<[String: Int]>([:])
        func attemptFinished(destination: String, outcome: String, seconds: Double) {}
        func deadLettered(destination: String?, reason: DeadLetter.Reason) {
            counts.withLock { $0["letter:" + reason.rawValue, default: 0] += 1 }
        }
        func recordTampered(record: String) {
            counts.withLock { $0["tampered", default: 0] += 1; $0["tampered:" + record, default: 0] += 1 }
        }
        subscript(_ name: String) -> Int { counts.current[name] ?? 0 }
    }

    /// A server, a webhook sink, and one instance delivering `hook` (routed) and `audit`
    /// (routed nothing) to the sink, sealing with `key`.
    final class Harness {
        let server: RedisServerProcess
        let redis: RedisClient
        let sink: WebhookSink
        let delivery: ClusterDelivery
        let acknowledgement: ClusterAcknowledgement
        let observer = Observer()

        init(key: String? = ClusterIntegrityTests.key) throws {
            server = try RedisServerProcess()
            redis = try clusterClient(server)
            guard pollUntil(timeout: 5, interval: 0.01, { [redis] in redis.isConnected }) else {
                throw RedisServerError("the cluster client did not connect")
            }
            sink = try WebhookSink()
            let configuration = try GatewayConfiguration.parse(text: """
                destination hook webhook \(sink.url("/ok")) {
                    backoff 50ms 200ms
                }
                destination audit webhook \(sink.url("/audit")) {
                    backoff 50ms 200ms
                }
                route * * * -> hook
                """)
            var cluster = ClusterConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
            cluster.clusterKeys = key.map { [ConfigSecret($0)] } ?? []
            delivery = try ClusterDelivery(configuration: configuration, cluster: cluster, client: redis, instanceId: "a",
                                           logger: .disabled, observer: observer, pollInterval: .milliseconds(50))
            acknowledgement = ClusterAcknowledgement(client: redis, dedupeWindow: cluster.dedupeWindow, seal: delivery.seal)
            delivery.start()
        }

        deinit {
            delivery.stop(grace: .zero) {}
            redis.shutdown()
        }

        func acknowledge(_ stored: StoredNotification) {
            let done = DispatchSemaphore(value: 0)
            acknowledgement.acknowledge(stored) { _ in done.signal() }
            done.wait()
            delivery.nudge(stored.destinations)
        }

        /// Bodies the sink received, by the event id they carry.
        var delivered: [String] {
            sink.requests.compactMap { request in
                request["body"]?.stringValue.flatMap { try? JSONValue.parse($0) }?["id"]?.stringValue
            }
        }
    }

    func text(_ bytes: [UInt8]?) -> String { bytes.map { String(decoding: $0, as: UTF8.self) } ?? "" }

    /// The reproduced attack: a delivered event's record copied, turned into a REFUND under a
    /// new id and queued on the stream, was delivered with `verified: true`. Now it, and every
    /// other record no instance wrote so, is dead-lettered `tampered` and counted; the
    /// genuine event alone reaches the webhook.
    @Test func aForgedRefundQueuedOnTheStreamIsNeverDelivered() async throws {
        let harness = try Harness()
        let redis = harness.redis
        harness.acknowledge(receivedNow("genuine-1", destinations: ["hook"]))
        #expect(harness.sink.waitFor { $0.count == 1 })
        let sealed = try #require(reply(redis, "GET", keys.event("genuine-1"))?.bytes)
        #expect(text(sealed).hasPrefix("sr1."), "records are sealed on the server")

        // 1. The copy turned into a REFUND, its seal kept.
        let refund = text(sealed).replacingOccurrences(of: "DID_RENEW", with: "REFUND").replacingOccurrences(of: "genuine-1", with: "forged-refund")
        // 2. The same without any seal.
        let plain = String(refund.dropFirst(69)).replacingOccurrences(of: "forged-refund", with: "forged-plain")
        #expect(reply(redis, "SET", keys.event("forged-refund"), refund)?.string == "OK")
        #expect(reply(redis, "SET", keys.event("forged-plain"), plain)?.string == "OK")
        // 3. The genuine record, untouched, under another id.
        #expect(reply(redis, "SET", keys.event("moved"), text(sealed))?.string == "OK")
        for id in ["forged-refund", "forged-plain", "moved"] {
            #expect(reply(redis, "XADD", keys.queue("hook"), "*", "id", id) != nil)
        }
        // 4. The genuine event on a stream it was never routed to; 5. an entry naming no event;
        // 6. a forged retry, through the delayed set.
        #expect(reply(redis, "XADD", keys.queue("audit"), "*", "id", "genuine-1") != nil)
        #expect(reply(redis, "XADD", keys.queue("hook"), "*", "junk", "1") != nil)
        #expect(reply(redis, "SET", keys.event("forged-retry"), refund.replacingOccurrences(of: "forged-refund", with: "forged-retry"))?.string == "OK")
        #expect(reply(redis, "ZADD", keys.delayed("hook"), "0", "forged-retry") != nil)

        #expect(pollUntil(timeout: 20) { harness.observer["tampered"] >= 6 }, "\(harness.observer.counts.current)")
        try? await Task.sleep(for: .seconds(0.5))
        #expect(harness.delivered == ["genuine-1"], "only the genuine event was delivered: \(harness.delivered)")
        #expect(!harness.sink.requests.contains { $0["body"]?.stringValue?.contains("REFUND") == true })
        #expect(harness.observer["tampered"] == 6 && harness.observer["tampered:event"] == 6, "\(harness.observer.counts.current)")

        let letters = await harness.delivery.deadLetters.list(DeadLetterQuery(reason: .stored(.tampered)), limit: 10, cursor: nil).items
        let tampered = Set(letters.map { "\($0.eventId)@\($0.destination ?? "")" })
        #expect(tampered == ["forged-refund@hook", "forged-plain@hook", "moved@hook", "forged-retry@hook", "genuine-1@audit"])
        #expect(letters.allSatisfy { $0.notification == nil && $0.detail?.contains("cluster-key") == true })
        // Nothing left to deliver, and a tampered letter is not replayed: what it stands in
        // for (kept aside) never checks out.
        for destination in ["hook", "audit"] {
            #expect(reply(redis, "XLEN", keys.queue(destination))?.integer == 0)
        }
        let refundLetter = DeadLetter.id(eventId: "forged-refund", destination: "hook")
        #expect(await harness.delivery.replay(deadLetterId: refundLetter, force: true) == .tampered)
        #expect(await harness.delivery.replayAll(DeadLetterQuery(reason: .stored(.tampered)), force: true) == BulkReplayResult())
        // The event view does not show a forged record as an event.
        #expect(await harness.delivery.state(ofEvent: "forged-refund")?.notification.event.type != "REFUND")
        #expect(await harness.delivery.state(ofEvent: "genuine-1")?.notification.event.type == "DID_RENEW")
    }

    /// A dead letter written straight into the server (a genuine one changed, or one made
    /// up) reads as `tampered`, is never replayed, and is moved aside behind a sealed
    /// `tampered` letter the first time a replay meets it.
    @Test func aForgedDeadLetterIsNeverReplayed() async throws {
        let harness = try Harness()
        let redis = harness.redis
        // An unrouted letter: acknowledged for no destination.
        harness.acknowledge(receivedNow("lost-1", destinations: []))
        let id = DeadLetter.id(eventId: "lost-1", destination: nil)
        let sealed = text(try #require(reply(redis, "HGET", keys.letters, id)?.bytes))
        #expect(await harness.delivery.deadLetters.letter(id: id)?.reason == .unrouted)

        // The letter changed into a REFUND, its seal kept; another made up without one.
        #expect(reply(redis, "HSET", keys.letters, id, sealed.replacingOccurrences(of: "DID_RENEW", with: "REFUND")) != nil)
        let madeUp = DeadLetter.id(eventId: "made-up", destination: "hook")
        let plain = String(sealed.dropFirst(69)).replacingOccurrences(of: "lost-1", with: "made-up")
            .replacingOccurrences(of: "\"destination\":null", with: "\"destination\":\"hook\"").replacingOccurrences(of: id, with: madeUp)
        #expect(reply(redis, "HSET", keys.letters, madeUp, plain) != nil)
        let index = try #require(reply(redis, "HGET", keys.letterIndex, id)?.string)
        #expect(reply(redis, "HSET", keys.letterIndex, madeUp, index.replacingOccurrences(of: id, with: madeUp)) != nil)

        for letterId in [id, madeUp] {
            let letter = try #require(await harness.delivery.deadLetters.letter(id: letterId))
            #expect(letter.reason == .tampered && letter.notification == nil, "\(letter.json)")
            #expect(await harness.delivery.replay(deadLetterId: letterId, force: true) == .tampered)
        }
        #expect(harness.observer["tampered:letter"] == 2)
        #expect(text(reply(redis, "HGET", keys.tamperedLetters, madeUp)?.bytes) == plain, "kept aside as it was")
        // Rewritten sealed, as tampered: met again, it is refused without counting again.
        let rewritten = text(reply(redis, "HGET", keys.letters, madeUp)?.bytes)
        #expect(rewritten.hasPrefix("sr1."))
        #expect(await harness.delivery.replay(deadLetterId: madeUp, force: true) == .tampered)
        #expect(harness.observer["tampered:letter"] == 2)
        try? await Task.sleep(for: .seconds(0.3))
        #expect(harness.sink.requests.isEmpty && reply(redis, "XLEN", keys.queue("hook"))?.integer == 0)
    }

    /// Review point 8: the letter index is not sealed. Made to say a genuine letter is another
    /// event's, or another destination's, it showed that letter as the other event in
    /// `/api/events/{id}` and put it in the other's listings and bulk replays. A letter now
    /// counts only for what it holds.
    @Test func aLetterIndexThatLiesIsNotBelieved() async throws {
        let harness = try Harness()
        let redis = harness.redis
        harness.acknowledge(receivedNow("real-1", destinations: []))
        let id = DeadLetter.id(eventId: "real-1", destination: nil)
        let entry = try #require(reply(redis, "HGET", keys.letterIndex, id)?.string)
        let lie = entry.replacingOccurrences(of: "\"real-1\"", with: "\"other-1\"")
            .replacingOccurrences(of: "\"destination\":null", with: "\"destination\":\"hook\"")
        #expect(lie.contains("other-1") && lie.contains("hook"), "\(lie)")
        #expect(reply(redis, "HSET", keys.letterIndex, id, lie) != nil)

        #expect(await harness.delivery.state(ofEvent: "other-1") == nil, "not shown as event other-1")
        let letters = harness.delivery.deadLetters
        #expect(await letters.letters(forEvent: "other-1").isEmpty)
        #expect(await letters.list(DeadLetterQuery(eventId: "other-1"), limit: 10, cursor: nil).items.isEmpty)
        #expect(await letters.list(DeadLetterQuery(destination: "hook"), limit: 10, cursor: nil).items.isEmpty)
        #expect(await harness.delivery.replayAll(DeadLetterQuery(eventId: "other-1")) == BulkReplayResult())
        #expect(await harness.delivery.replayAll(DeadLetterQuery(destination: "hook")) == BulkReplayResult())
        try? await Task.sleep(for: .seconds(0.3))
        #expect(harness.sink.requests.isEmpty)
        // Still listed, as what it is.
        #expect(await letters.list(DeadLetterQuery(), limit: 10, cursor: nil).items.map(\.eventId) == ["real-1"])
    }

    /// Without `cluster-key` records are written as before, and a sealed record (from an
    /// instance that has the key) is still read.
    @Test func withoutAKeyRecordsAreNotSealed() async throws {
        let harness = try Harness(key: nil)
        harness.acknowledge(receivedNow("plain-1", destinations: ["hook"]))
        #expect(harness.sink.waitFor { $0.count == 1 })
        let record = text(reply(harness.redis, "GET", keys.event("plain-1"))?.bytes)
        #expect(record.hasPrefix("{"))
        #expect(harness.delivered == ["plain-1"])
    }
}
