import Dispatch
import Foundation
import StoreRelayCluster
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// `wait-replicas` against a real Valkey primary and replica (issue 26): nothing is answered
/// 200 before the replica has it, and a duplicate waits as the first acceptance did, whether
/// it comes back to the same instance or reaches another.
@Suite(.serialized, .enabled(if: RedisServerProcess.isValkeyAvailable, Comment(rawValue: RedisServerProcess.valkeySkipMessage)))
struct ClusterReplicationTests {
    let primary: RedisServerProcess
    let replica: RedisServerProcess

    init() throws {
        primary = try RedisServerProcess(.valkey, extraArguments: ["--repl-diskless-sync-delay", "0"])
        replica = try RedisServerProcess(.valkey, extraArguments: ["--replicaof", "127.0.0.1 \(primary.port)"])
    }

    func acknowledge(_ acknowledgement: ClusterAcknowledgement, _ id: String) -> ClusterAcknowledgement.Outcome {
        let outcome = Locked<ClusterAcknowledgement.Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        acknowledgement.acknowledge(notification(id, destinations: ["billing"])) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return outcome.current!
    }

    func instance() throws -> (RedisClient, ClusterAcknowledgement) {
        let client = try clusterClient(primary, requirements: ServerRequirements(waitReplicas: 1))
        #expect(pollUntil(timeout: 5, interval: 0.01) { client.isConnected }, "\(String(describing: client.lastError))")
        let acknowledgement = ClusterAcknowledgement(client: client, dedupeWindow: .seconds(7 * 86_400), waitReplicas: 1,
                                                     waitTimeout: .milliseconds(300))
        return (client, acknowledgement)
    }

    /// Waits until the restarted replica reports its append-only file again (after a full
    /// resync it does so once the file is rewritten): `id` then acknowledges as `expected`.
    func eventually(_ acknowledgement: ClusterAcknowledgement, _ id: String, is expected: ClusterAcknowledgement.Outcome) -> Bool {
        pollUntil(timeout: 20, interval: 0.1) { acknowledge(acknowledgement, id) == expected }
    }

    @Test func nothingIsAcknowledgedBeforeTheReplicaHasItNotEvenAsADuplicate() throws {
        #expect(primary.waitForReplicas(1, appendOnly: true))
        let (a, first) = try instance()
        let (b, second) = try instance()
        defer { a.shutdown(); b.shutdown() }
        #expect(acknowledge(first, "replicated") == .stored)
        #expect(acknowledge(second, "replicated") == .duplicate, "a replicated duplicate is answered at once")

        replica.stop()
        let started = Date()
        guard case .unavailable(let why) = acknowledge(first, "unreplicated") else {
            Issue.record("acknowledged with its replica down")
            return
        }
        #expect(Date().timeIntervalSince(started) < 1.5)
        #expect(why.contains("WAITAOF reached 0 of 1"), "\(why)")
        // Stored on the primary, not on the replica: neither Apple's retry to this instance
        // nor the same notification on another is a 200 `duplicate` yet.
        #expect(reply(a, "EXISTS", ClusterKeys().seen("unreplicated"))?.integer == 1)
        guard case .unavailable = acknowledge(first, "unreplicated"), case .unavailable = acknowledge(second, "unreplicated") else {
            Issue.record("a duplicate of an unreplicated acceptance was answered")
            return
        }

        try replica.restart()
        #expect(primary.waitForReplicas(1, appendOnly: true))
        #expect(eventually(second, "unreplicated", is: .duplicate))
        #expect(acknowledge(first, "unreplicated") == .duplicate)
        #expect(acknowledge(first, "after") == .stored)
        #expect(reply(a, "XLEN", ClusterKeys().queue("billing"))?.integer == 3, "each stored once")
    }

    /// A replica frozen rather than gone: the same, within the wait timeout.
    @Test func aFrozenReplicaHoldsBackEveryAnswer() throws {
        #expect(primary.waitForReplicas(1, appendOnly: true))
        let (client, acknowledgement) = try instance()
        defer { client.shutdown() }
        #expect(acknowledge(acknowledgement, "one") == .stored)
        replica.pause()
        defer { replica.resume() }
        let started = Date()
        guard case .unavailable = acknowledge(acknowledgement, "two"), case .unavailable = acknowledge(acknowledgement, "one") else {
            Issue.record("answered while the replica was frozen")
            return
        }
        #expect(Date().timeIntervalSince(started) < 2, "two waits of 300 ms")
        replica.resume()
        #expect(eventually(acknowledgement, "two", is: .duplicate))
        #expect(client.isConnected, "waiting never cost the connection")
    }

    /// The WAITAOF calls the primary ran since the last `CONFIG RESETSTAT`.
    func waitAOFCalls() throws -> Int {
        let stats = try primary.command("INFO", "commandstats")
        guard let line = stats.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_waitaof:") }),
              let calls = line.split(separator: ",").first?.split(separator: "=").last
        else { return 0 }
        return Int(calls) ?? 0
    }

    /// `count` acknowledgements at once on one instance, each waited for.
    func acknowledgeTogether(_ acknowledgement: ClusterAcknowledgement, _ count: Int, prefix: String) -> [ClusterAcknowledgement.Outcome] {
        let outcomes = Locked<[ClusterAcknowledgement.Outcome]>([])
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            acknowledgement.acknowledge(notification("\(prefix)-\(index)", destinations: ["billing"])) { outcome in
                outcomes.withLock { $0.append(outcome) }
                group.leave()
            }
        }
        group.wait()
        return outcomes.current
    }

    /// Review point 5: each acknowledgement sent its own WAITAOF on the connection every
    /// delivery shares, so K of them waited one behind the other. One WAITAOF in flight now
    /// serves every acknowledgement whose write came before it.
    @Test func acknowledgementsWaitingTogetherShareTheirWAITAOF() throws {
        #expect(primary.waitForReplicas(1, appendOnly: true))
        let (client, acknowledgement) = try instance()
        defer { client.shutdown() }
        #expect(acknowledge(acknowledgement, "warm-up") == .stored)
        _ = try primary.command("CONFIG", "RESETSTAT")
        let outcomes = acknowledgeTogether(acknowledgement, 40, prefix: "together")
        #expect(outcomes.count == 40 && outcomes.allSatisfy { $0 == .stored }, "\(outcomes)")
        let healthy = try waitAOFCalls()
        #expect(healthy > 0 && healthy <= 20, "\(healthy) WAITAOF for 40 acknowledgements (one each before)")

        // A frozen replica: each acknowledgement still waits out its own timeout and fails,
        // with one WAITAOF at a time on the connection rather than one per acknowledgement.
        replica.pause()
        defer { replica.resume() }
        _ = try primary.command("CONFIG", "RESETSTAT")
        let started = Date()
        let frozen = acknowledgeTogether(acknowledgement, 10, prefix: "frozen")
        let elapsed = Date().timeIntervalSince(started)
        #expect(frozen.count == 10 && frozen.allSatisfy { if case .unavailable = $0 { true } else { false } }, "\(frozen)")
        // 300 ms each, waited together (one behind the other it took 1.3 s); slack for a
        // busy machine.
        #expect(elapsed < 1.0, "\(elapsed) s")
        let slices = try waitAOFCalls()
        #expect(slices <= 10, "\(slices) WAITAOF slices for 10 acknowledgements of 300 ms")
        replica.resume()
        #expect(client.isConnected)
    }
}
