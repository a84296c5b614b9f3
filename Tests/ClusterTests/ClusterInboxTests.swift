import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// `ClusterInbox` against a real `redis-server`: a put is kept sealed and claimed; another
/// instance takes it only once the claim ran out, and then only one instance does; renewals
/// keep it; a removal forgets it; a record nobody sealed is dropped, never handed over.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterInboxTests {
    static let key = "cluster-key-for-tests-0123456789abcdef"
    let server: RedisServerProcess
    let redis: RedisClient
    let clock = ManualClock()
    let logs = LogCapture()
    let keys = ClusterKeys()

    init() throws {
        server = try RedisServerProcess()
        redis = try clusterClient(server)
        guard pollUntil(timeout: 5, interval: 0.01, { [redis] in redis.isConnected }) else {
            throw RedisServerError("the cluster client did not connect")
        }
    }

    private func inbox(key: String? = Self.key) -> ClusterInbox {
        ClusterInbox(client: redis, seal: ClusterSeal(keys: key.map { [$0] } ?? []), claim: .seconds(60), clock: clock,
                     logger: logs.logger)
    }

    private func put(_ inbox: ClusterInbox, _ stored: StoredNotification) -> String? {
        let result = Locked<String??>(nil)
        let done = DispatchSemaphore(value: 0)
        inbox.put(id: stored.id, encoded: stored.encoded()) { error in
            result.withLock { $0 = .some(error) }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
        return result.current ?? "the put never completed"
    }

    /// The ids taken; nil when the server could not be asked or did not answer in time.
    private func takeExpired(_ inbox: ClusterInbox) -> [String]? {
        taken(inbox)?.map(\.id)
    }

    private func taken(_ inbox: ClusterInbox) -> [StoredNotification]? {
        let result = Locked<[StoredNotification]?>(nil)
        let done = DispatchSemaphore(value: 0)
        inbox.takeExpired { taken, _ in
            result.withLock { $0 = taken }
            done.signal()
        }
        guard done.wait(timeout: .now() + 10) == .success else { return nil }
        return result.current
    }


    @Test func aPutIsTakenOverOnlyOnceItsClaimRanOut() throws {
        let first = inbox(), second = inbox()
        let stored = notification("inbox-1")
        #expect(put(first, stored) == nil)
        let record = try #require(reply(redis, "HGET", keys.inbox, "inbox-1")?.bytes)
        #expect(record.starts(with: Array("sr1.".utf8)), "kept sealed")
        #expect(takeExpired(second) == [], "the holder's claim runs")

        clock.advance(by: .seconds(61))
        let found = try #require(taken(second))
        #expect(found.map(\.id) == ["inbox-1"])
        #expect(found.first?.encoded() == stored.encoded(), "handed over as it was put")
        #expect(takeExpired(first) == [], "taken once: the taker's claim runs now")
    }

    @Test func renewalsKeepAClaimAndRemovalForgetsIt() throws {
        let holder = inbox(), other = inbox()
        #expect(put(holder, notification("inbox-2")) == nil)
        #expect(put(holder, notification("inbox-3")) == nil)
        clock.advance(by: .seconds(45))
        holder.renew(["inbox-2", "inbox-gone"])
        // Renewals and removals are sent without a reply to wait for: the server is watched.
        let renewed = String(clock.now().milliseconds + 60_000)
        #expect(pollUntil(timeout: 5) { reply(redis, "ZSCORE", keys.inboxClaims, "inbox-2")?.string == renewed })
        clock.advance(by: .seconds(30))
        #expect(takeExpired(other) == ["inbox-3"], "the renewed claim runs; the other ran out")
        #expect(reply(redis, "ZSCORE", keys.inboxClaims, "inbox-gone")?.isNull == true, "renewal adds nothing")

        holder.remove("inbox-2")
        #expect(pollUntil(timeout: 5) { reply(redis, "HEXISTS", keys.inbox, "inbox-2")?.integer == 0 })
        #expect(reply(redis, "ZSCORE", keys.inboxClaims, "inbox-2")?.isNull == true)
        clock.advance(by: .seconds(600))
        #expect(takeExpired(other) == ["inbox-3"])
    }

    /// Whoever can write to the server cannot make an instance act on a push no instance put:
    /// an unsealed or moved record is set aside, as it was, with an error; the rest still
    /// handed over.
    @Test func recordsThatFailTheirCheckAreDropped() throws {
        let holder = inbox()
        #expect(put(holder, notification("inbox-4")) == nil)
        let genuine = try #require(reply(redis, "HGET", keys.inbox, "inbox-4")?.bytes)
        let plain = notification("inbox-5").encoded()
        _ = try waitForResult { completion in
            redis.send([
                RESPCommand([Array("HSET".utf8), Array(keys.inbox.utf8), Array("inbox-5".utf8), plain]),
                RESPCommand([Array("HSET".utf8), Array(keys.inbox.utf8), Array("inbox-6".utf8), genuine]),
                RESPCommand("ZADD", keys.inboxClaims, "0", "inbox-5", "0", "inbox-6"),
            ]) { results in completion(results.last!) }
        }
        clock.advance(by: .seconds(61))
        #expect(takeExpired(inbox()) == ["inbox-4"])
        #expect(logs.contains("cluster inbox entry fails its check", "inbox-5", "carries no seal"))
        #expect(logs.contains("cluster inbox entry fails its check", "inbox-6", "does not match"))
        #expect(pollUntil(timeout: 5) { reply(redis, "HLEN", keys.inboxTampered)?.integer == 2 })
        #expect(reply(redis, "HGET", keys.inboxTampered, "inbox-5")?.bytes == plain, "kept as it was")
        #expect(reply(redis, "HLEN", keys.inbox)?.integer == 1)
        #expect(reply(redis, "ZCARD", keys.inboxClaims)?.integer == 1)
    }

    @Test func anUnreachableServerFailsThePut() throws {
        server.pause()
        defer { server.resume() }
        var configuration = RedisConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
        configuration.commandTimeout = .milliseconds(300)
        configuration.connectTimeout = .milliseconds(300)
        let impatient = RedisClient(configuration: configuration)
        impatient.start()
        defer { impatient.shutdown() }
        let refused = ClusterInbox(client: impatient, seal: .off, clock: clock, logger: logs.logger)
        let error = put(refused, notification("inbox-7"))
        #expect(error?.contains("the cluster server did not keep it") == true, "\(String(describing: error))")
    }
}
