import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// Issue 26, point 2, against a real `redis-server`: a server that lost its data is noticed
/// (`ClusterEpoch`), with the last moment it was seen whole.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterEpochTests {
    let keys = ClusterKeys()

    /// One instance's epoch checks, and the resets they report.
    final class Watch: @unchecked Sendable {
        // Invariant: `epoch` is set once; `resets` is a lock.
        let epoch: ClusterEpoch
        let resets = Locked<[ClusterEpoch.Reset]>([])

        init(_ client: RedisClient, stateFile: String? = nil) {
            epoch = ClusterEpoch(client: client, interval: .milliseconds(100), stateFile: stateFile)
            epoch.start { [resets] reset in resets.withLock { $0.append(reset) } }
        }

        deinit { epoch.stop() }

        /// Waits for the first check: the epoch is known.
        func waitForEpoch() -> String? {
            _ = pollUntil(timeout: 10, interval: 0.02) { [epoch] in epoch.current.epoch != nil }
            return epoch.current.epoch
        }
    }

    func connected(_ server: RedisServerProcess) throws -> RedisClient {
        let client = try clusterClient(server)
        #expect(pollUntil(timeout: 5, interval: 0.01) { client.isConnected })
        return client
    }

    /// FLUSHALL: the instance that finds the epoch missing writes a new one and reports
    /// `missing`; another instance finds it changed. Both say since when data may be lost.
    @Test func aFlushedServerIsNoticedByEveryInstance() throws {
        let server = try RedisServerProcess()
        let (first, second) = (try connected(server), try connected(server))
        defer { first.shutdown(); second.shutdown() }
        let a = Watch(first)
        let epoch = try #require(a.waitForEpoch())
        let b = Watch(second)
        #expect(b.waitForEpoch() == epoch, "one epoch for every instance")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(a.resets.current.isEmpty && b.resets.current.isEmpty, "nothing lost yet")

        let flushed = Timestamp.now()
        #expect(reply(first, "FLUSHALL")?.string == "OK")
        #expect(pollUntil(timeout: 5) { a.resets.current.count == 1 && b.resets.current.count == 1 })
        let resets = a.resets.current + b.resets.current
        #expect(Set(resets.map(\.cause)).isSubset(of: [.missing, .changed]) && resets.contains { $0.cause == .missing })
        for reset in resets {
            #expect(reset.previousEpoch == epoch && reset.epoch != epoch)
            // The last check that still saw the old epoch: at most one interval (and a
            // scheduling margin) before the flush.
            #expect(reset.lostSince <= flushed && reset.lostSince.milliseconds > flushed.milliseconds - 1_000, "\(reset)")
        }
        #expect(Set(resets.map(\.epoch)).count == 1, "the instances agree on the new epoch")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(a.resets.current.count == 1 && b.resets.current.count == 1, "one loss, reported once")
    }

    /// A restart that keeps the append-only file keeps the epoch; one without it is a loss,
    /// noticed when the instance reconnects.
    @Test func aRestartWithoutTheAppendOnlyFileIsNoticed() throws {
        let server = try RedisServerProcess()
        let client = try connected(server)
        defer { client.shutdown() }
        let watch = Watch(client)
        let epoch = try #require(watch.waitForEpoch())
        try server.restart()
        #expect(pollUntil(timeout: 10) { client.isConnected })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(watch.resets.current.isEmpty, "the append-only file kept the epoch")

        try server.restartEmpty()
        #expect(pollUntil(timeout: 10) { watch.resets.current.count == 1 })
        #expect(watch.resets.current.first?.cause == .missing && watch.resets.current.first?.previousEpoch == epoch)
    }

    /// The epoch as before but its counter lower than already seen: writes were lost (a
    /// replica that lacked them took over).
    @Test func aCounterGoingBackIsNoticed() throws {
        let server = try RedisServerProcess()
        let client = try connected(server)
        defer { client.shutdown() }
        let watch = Watch(client)
        _ = try #require(watch.waitForEpoch())
        #expect(pollUntil(timeout: 5) { (reply(client, "GET", keys.epochClock)?.string).flatMap(Int.init) ?? 0 >= 5 })
        #expect(reply(client, "SET", keys.epochClock, "1")?.string == "OK")
        #expect(pollUntil(timeout: 5) { watch.resets.current.count == 1 })
        #expect(watch.resets.current.first?.cause == .rolledBack)
    }

    /// What an instance saw is kept on disk: a loss while it was down is noticed at start,
    /// from the moment it last saw the server whole.
    @Test func aLossWhileTheInstanceWasDownIsNoticedAtStart() throws {
        let server = try RedisServerProcess()
        let client = try connected(server)
        defer { client.shutdown() }
        let file = try TestPaths.makeTemporaryDirectory("storerelay-epoch").appendingPathComponent("cluster-epoch.json").path
        var watch: Watch? = Watch(client, stateFile: file)
        let epoch = try #require(watch?.waitForEpoch())
        let lastSeen = try #require(watch?.epoch.current.lastSeen)
        #expect(pollUntil(timeout: 5, interval: 0.01) { FileManager.default.fileExists(atPath: file) })
        watch = nil
        // Down, and meanwhile the server lost everything.
        #expect(reply(client, "FLUSHALL")?.string == "OK")
        let again = Watch(client, stateFile: file)
        #expect(pollUntil(timeout: 5) { again.resets.current.count == 1 })
        let reset = try #require(again.resets.current.first)
        #expect(reset.previousEpoch == epoch && reset.cause == .missing)
        #expect(reset.lostSince.milliseconds <= lastSeen.milliseconds && reset.lostSince.milliseconds > lastSeen.milliseconds - 1_000)
        // A first start (no file) with an epoch already there is no loss.
        let fresh = Watch(client, stateFile: nil)
        _ = fresh.waitForEpoch()
        Thread.sleep(forTimeInterval: 0.3)
        #expect(fresh.resets.current.isEmpty)
    }

    /// The state file is saved on a fresh deployment too, where nothing has created the data
    /// directory yet (cluster mode with an `admin-token` and webhook destinations only).
    @Test func theStateFileIsSavedWhenTheDataDirectoryIsMissing() throws {
        let server = try RedisServerProcess()
        let client = try connected(server)
        defer { client.shutdown() }
        let file = try TestPaths.makeTemporaryDirectory("storerelay-epoch").appendingPathComponent("data/cluster-epoch.json").path
        let watch = Watch(client, stateFile: file)
        _ = try #require(watch.waitForEpoch())
        #expect(pollUntil(timeout: 5, interval: 0.01) { FileManager.default.fileExists(atPath: file) })
    }
}
