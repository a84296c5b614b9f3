import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// The watch against a real `redis-server` (issue 26): durability re-checked while connected,
/// and silence noticed within a second of the server freezing.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ServerWatchTests {
    func watch(_ server: RedisServerProcess, durability: ServerDurability = ServerDurability(), log: LogCapture,
               durabilityInterval: Duration = .milliseconds(200)) throws -> ServerWatch {
        let configuration = RedisConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(server.port)"))
        let watch = ServerWatch(server: configuration, durability: durability, logger: log.logger, durabilityInterval: durabilityInterval)
        watch.start()
        return watch
    }

    /// A live `CONFIG SET` of each setting is noticed at the next check, logged naming it, and
    /// forgotten once it is set back.
    @Test(arguments: [["appendfsync", "everysec", "always"], ["appendonly", "no", "yes"],
                      ["maxmemory-policy", "allkeys-lru", "noeviction"], ["maxmemory-policy", "volatile-ttl", "noeviction"]])
    func aLiveChangeOfASettingIsNoticedAndForgottenWhenSetBack(change: [String]) throws {
        let server = try RedisServerProcess()
        let log = LogCapture()
        let watch = try watch(server, log: log)
        defer { watch.stop() }
        // Answering, and the first verdict in (until then nothing vouches for the server).
        #expect(pollUntil(timeout: 5) { watch.isAnswering && watch.problem == nil })
        #expect(watch.durabilityRefusal == nil)

        try server.command("CONFIG", "SET", change[0], change[1])
        #expect(pollUntil(timeout: 2) { watch.durabilityRefusal != nil })
        #expect(watch.durabilityRefusal?.contains("\(change[0]) \(change[1])") == true, "\(String(describing: watch.durabilityRefusal))")
        #expect(watch.problem == watch.durabilityRefusal)
        #expect(log.contains("\"level\":\"error\"", "not durable", "\(change[0]) \(change[1])"), "\(log.lines.current)")

        try server.command("CONFIG", "SET", change[0], change[2])
        #expect(pollUntil(timeout: 2) { watch.durabilityRefusal == nil })
        #expect(log.contains("durable again"))
    }

    /// With `require-noeviction no` the policy is not the watch's business.
    @Test func aWaivedSettingIsNotChecked() throws {
        let server = try RedisServerProcess(extraArguments: ["--maxmemory-policy", "allkeys-lru"])
        let log = LogCapture()
        let watch = try watch(server, durability: ServerDurability(requireNoEviction: false), log: log)
        defer { watch.stop() }
        #expect(pollUntil(timeout: 5) { watch.isAnswering })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(watch.durabilityRefusal == nil)
        try server.command("CONFIG", "SET", "appendfsync", "no")
        #expect(pollUntil(timeout: 2) { watch.durabilityRefusal?.contains("appendfsync no") == true })
    }

    /// Review point 3: the server at `maxclients` refuses the watch's connection, then is set
    /// to `appendfsync no`. Acceptance went on on the watch's last verdict forever; now it
    /// stops once no verdict came for 3 intervals, and resumes once one passes again.
    @Test func noRecentVerdictStopsAcceptance() throws {
        let server = try RedisServerProcess()
        let log = LogCapture()
        let watch = try watch(server, log: log)
        defer { watch.stop() }
        #expect(pollUntil(timeout: 5) { watch.isAnswering && watch.acceptanceRefusal == nil })
        // The main connection keeps the server's one slot; the watch's is closed and refused.
        let main = try clusterClient(server)
        defer { main.shutdown() }
        #expect(pollUntil(timeout: 5) { main.isConnected })
        #expect(reply(main, "CONFIG", "SET", "maxclients", "1")?.string == "OK")
        #expect(reply(main, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")?.integer == 1)
        #expect(reply(main, "CONFIG", "SET", "appendfsync", "no")?.string == "OK")
        let changed = Date()
        #expect(pollUntil(timeout: 5, interval: 0.02) { watch.acceptanceRefusal != nil })
        // 3 intervals of 200 ms after the last verdict, plus slack for a busy machine.
        #expect(Date().timeIntervalSince(changed) < 2, "refused after \(Date().timeIntervalSince(changed)) s")
        #expect(watch.acceptanceRefusal?.contains("have not been checked for") == true, "\(String(describing: watch.acceptanceRefusal))")
        #expect(watch.durabilityRefusal == nil, "no check saw the change")

        #expect(reply(main, "CONFIG", "SET", "maxclients", "100")?.string == "OK")
        #expect(pollUntil(timeout: 5) { watch.acceptanceRefusal?.contains("appendfsync no") == true })
        #expect(reply(main, "CONFIG", "SET", "appendfsync", "always")?.string == "OK")
        #expect(pollUntil(timeout: 5) { watch.acceptanceRefusal == nil })
    }

    /// Before the watch's first verdict nothing vouches for the server, unless the main
    /// connection just passed its checks; that counts for as long as a verdict of the watch.
    @Test func theMainConnectionsChecksVouchUntilTheWatchsVerdicts() throws {
        let configuration = RedisConfiguration(url: try RedisURL.parse("redis://127.0.0.1:\(try RedisServerProcess.freePort())"))
        let watch = ServerWatch(server: configuration, durability: ServerDurability(), logger: .disabled,
                                durabilityInterval: .milliseconds(200))
        watch.start()
        defer { watch.stop() }
        #expect(watch.acceptanceRefusal?.contains("not been checked yet") == true)
        watch.connectionChecked()
        #expect(watch.acceptanceRefusal == nil)
        #expect(pollUntil(timeout: 3, interval: 0.02) { watch.acceptanceRefusal != nil }, "stale after 600 ms")
        // Nothing required, nothing to wait for.
        let unchecked = ServerWatch(server: configuration, durability: ServerDurability(requireAOF: false, requireNoEviction: false),
                                    logger: .disabled)
        #expect(unchecked.acceptanceRefusal == nil)
    }

    /// SIGSTOP: silent within a second, without waiting for a command timeout; SIGCONT:
    /// answering again.
    @Test func aFrozenServerIsSilentWithinASecond() throws {
        let server = try RedisServerProcess()
        let log = LogCapture()
        let watch = try watch(server, log: log, durabilityInterval: .seconds(2))
        defer { watch.stop() }
        #expect(pollUntil(timeout: 5) { watch.isAnswering })
        Thread.sleep(forTimeInterval: 0.5)
        server.pause()
        let paused = Date()
        let noticed = pollUntil(timeout: 5, interval: 0.01) { !watch.isAnswering }
        let elapsed = Date().timeIntervalSince(paused)
        #expect(watch.problem?.contains("has not answered") == true)
        // Logged at the watch's next tick (a silence shorter than one goes unlogged).
        Thread.sleep(forTimeInterval: 0.4)
        server.resume()
        // By design at most 0.9 s (a probe every 200 ms, silent 700 ms after one); the rest
        // is slack for a busy machine.
        #expect(noticed && elapsed < 1.2, "silent after \(elapsed) s")
        #expect(pollUntil(timeout: 5) { watch.isAnswering }, "answering again")
        #expect(pollUntil(timeout: 2) { log.contains("cluster server silent") && log.contains("answering again") }, "\(log.lines.current)")
    }

    /// Frozen for longer than the watch's command timeout: its connection is replaced, and
    /// it answers again soon after the server does.
    @Test func aLongFreezeEndsInAFreshConnection() throws {
        let server = try RedisServerProcess()
        let watch = try watch(server, log: LogCapture())
        defer { watch.stop() }
        #expect(pollUntil(timeout: 5) { watch.isAnswering })
        server.pause()
        Thread.sleep(forTimeInterval: 3)
        #expect(!watch.isAnswering)
        server.resume()
        let resumed = Date()
        #expect(pollUntil(timeout: 5) { watch.isAnswering })
        #expect(Date().timeIntervalSince(resumed) < 2.5, "answering \(Date().timeIntervalSince(resumed)) s after the server")
    }
}
