import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Cluster mode on managed and replicated servers (issue 26): a server that can evict keys is
/// refused, durability is re-checked while connected, `/readyz` follows a frozen server within
/// a second, and `wait-replicas` holds back every 200 (the duplicate's too) until the replicas
/// have the write. Real gateways (in the test process), real `redis-server`/`valkey-server`.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterDurabilityTests {
    let ca: TestCertificateAuthority

    init() throws {
        ca = try TestCertificateAuthority()
    }

    /// One instance and its admin listener.
    typealias Instance = AdminGateway

    func configuration(_ server: RedisServerProcess, options: String) -> String {
        Gateway.bareConfig("""
            trust-root ./test-root.pem
            cluster redis://127.0.0.1:\(server.port) {
                instance-id a
                \(options)
            }
            destination all file ./data/q
            route * * * -> all
            """)
    }

    func start(_ server: RedisServerProcess, options: String = "") throws -> Instance {
        let directory = try Gateway.directory(trusting: ca, "storerelay-cluster-durability")
        let gateway = try Gateway(config: configuration(server, options: options), directory: directory)
        return try AdminGateway(gateway)
    }

    /// Starts a gateway that must refuse to start; returns its log.
    func refusedStart(_ server: RedisServerProcess, options: String = "") throws -> String {
        let directory = try Gateway.directory(trusting: ca, "storerelay-cluster-refused")
        let process = try GatewayProcess(config: configuration(server, options: options), directory: directory)
        let status = process.waitForExit(timeout: 20)
        #expect(status != nil && status != 0, "the start was not refused")
        return process.logLines.joined(separator: "\n")
    }

    func post(_ instance: Instance, _ uuid: String) throws -> CurlResponse {
        try instance.gateway.post(signedPayload: TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid))
    }

    // MARK: Eviction

    /// With `allkeys-lru` the server evicted acknowledged events and dead letters; with
    /// `volatile-lru`, dedupe markers (they have a TTL). Either is refused at start, naming
    /// the setting.
    @Test(arguments: ["allkeys-lru", "volatile-lru"])
    func aServerThatCanEvictKeysIsRefusedAtStart(policy: String) throws {
        let server = try RedisServerProcess(extraArguments: ["--maxmemory-policy", policy])
        let log = try refusedStart(server)
        #expect(log.contains("maxmemory-policy \(policy)") && log.contains("noeviction"), "\(log)")
    }

    /// `require-noeviction no` starts on such a server, and says so at start and in status.
    @Test func requireNoevictionNoStartsWithAWarning() throws {
        let server = try RedisServerProcess(extraArguments: ["--maxmemory-policy", "allkeys-lru"])
        let instance = try start(server, options: "require-noeviction no")
        let warning = instance.gateway.process.waitForLog(timeout: 5) {
            $0["level"]?.stringValue == "warning" && $0["message"]?.stringValue?.contains("require-noeviction no") == true
        }
        #expect(warning != nil, "\(instance.gateway.process.logLines.joined(separator: "\n"))")
        let cluster = try #require(instance.status?["cluster"])
        #expect(cluster["requireNoeviction"]?.boolValue == false)
        #expect(cluster["durability"]?["maxmemory-policy"]?.stringValue == "allkeys-lru")
        let warnings = cluster["warnings"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(warnings.contains { $0.contains("require-noeviction no") }, "\(warnings)")
        #expect(try post(instance, UUID().uuidString.lowercased()).status == 200)
    }

    // MARK: Durability while connected

    /// `CONFIG SET appendfsync everysec` (or an evicting policy) on a live server stops the
    /// 200s within the check period: acceptance and `/readyz` answer 503, a log line names
    /// the setting; setting it back brings them back.
    @Test(arguments: [["appendfsync", "everysec", "always"], ["maxmemory-policy", "volatile-lru", "noeviction"]])
    func aLiveChangeOfDurabilityStopsAcknowledgementsUntilItIsBack(change: [String]) throws {
        let setting = (name: change[0], lax: change[1], durable: change[2])
        let server = try RedisServerProcess()
        let instance = try start(server)
        #expect(pollUntil(timeout: 10) { instance.readiness == 200 })
        #expect(try post(instance, UUID().uuidString.lowercased()).status == 200)

        #expect(try server.command("CONFIG", "SET", setting.name, setting.lax) == "OK")
        let changed = Date()
        #expect(pollUntil(timeout: 6) { instance.readiness == 503 }, "/readyz still 200")
        #expect(Date().timeIntervalSince(changed) < 5, "noticed after \(Date().timeIntervalSince(changed)) s")
        let refused = try post(instance, UUID().uuidString.lowercased())
        #expect(refused.status == 503, "\(refused.body)")
        let line = instance.gateway.process.waitForLog(timeout: 5) {
            $0["level"]?.stringValue == "error" && "\($0)".contains("\(setting.name) \(setting.lax)")
        }
        #expect(line != nil, "no log line names \(setting.name) \(setting.lax)")
        let problem = instance.status?["cluster"]?["durabilityProblem"]?.stringValue ?? ""
        #expect(problem.contains("\(setting.name) \(setting.lax)"), "/api/status: \(problem)")

        #expect(try server.command("CONFIG", "SET", setting.name, setting.durable) == "OK")
        #expect(pollUntil(timeout: 6) { instance.readiness == 200 }, "/readyz did not come back")
        #expect(try post(instance, UUID().uuidString.lowercased()).status == 200)
        #expect(instance.status?["cluster"]?["durabilityProblem"]?.isNull == true)
    }

    // MARK: Readiness

    /// A frozen server (SIGSTOP) fails `/readyz` within about a second, and it is ready again
    /// once the server answers.
    @Test func aFrozenServerFailsReadinessWithinASecond() throws {
        let server = try RedisServerProcess()
        let instance = try start(server)
        #expect(pollUntil(timeout: 10) { instance.readiness == 200 })
        Thread.sleep(forTimeInterval: 0.3)
        server.pause()
        let paused = Date()
        let noticed = pollUntil(timeout: 5, interval: 0.02) { instance.readiness == 503 }
        let elapsed = Date().timeIntervalSince(paused)
        server.resume()
        #expect(noticed && elapsed < 1.3, "/readyz turned 503 after \(elapsed) s")
        #expect(pollUntil(timeout: 10) { instance.readiness == 200 }, "/readyz did not come back")
        #expect(try post(instance, UUID().uuidString.lowercased()).status == 200)
    }

    // MARK: Replicas

    /// Redis 7.0 has no WAITAOF: `wait-replicas` on it is refused at start in one sentence.
    @Test(.enabled(if: !RedisServerProcess.redisHasWAITAOF, "the installed redis-server has WAITAOF"))
    func waitReplicasIsRefusedOnAServerWithoutWAITAOF() throws {
        let server = try RedisServerProcess()
        let log = try refusedStart(server, options: "wait-replicas 1")
        #expect(log.contains("wait-replicas 1 needs WAITAOF"), "\(log)")
    }

    /// A primary and a replica: with the replica stopped a notification is answered 503 within
    /// `wait-timeout`, and Apple's retry of it is not answered 200 `duplicate` either until
    /// the replica has it.
    @Test(.enabled(if: RedisServerProcess.isValkeyAvailable, Comment(rawValue: RedisServerProcess.valkeySkipMessage)))
    func withItsReplicaDownNothingIsAcknowledgedNotEvenAsADuplicate() throws {
        let primary = try RedisServerProcess(.valkey, extraArguments: ["--repl-diskless-sync-delay", "0"])
        let replica = try RedisServerProcess(.valkey, extraArguments: ["--replicaof", "127.0.0.1 \(primary.port)"])
        #expect(primary.waitForReplicas(1, appendOnly: true))
        let instance = try start(primary, options: "wait-replicas 1\nwait-timeout 500ms")
        let first = try post(instance, UUID().uuidString.lowercased())
        #expect(first.status == 200 && first.json?["status"]?.stringValue == "accepted", "\(first.body)")

        replica.stop()
        let uuid = UUID().uuidString.lowercased()
        let started = Date()
        let unreplicated = try post(instance, uuid)
        let elapsed = Date().timeIntervalSince(started)
        #expect(unreplicated.status == 503, "\(unreplicated.body)")
        #expect(elapsed >= 0.45 && elapsed < 2, "answered after \(elapsed) s")
        let retry = try post(instance, uuid)
        #expect(retry.status == 503, "Apple's retry was answered \(retry.status) \(retry.body) before the replica had it")

        try replica.restart()
        #expect(primary.waitForReplicas(1, appendOnly: true))
        let replicated = try post(instance, uuid)
        #expect(replicated.status == 200 && replicated.json?["status"]?.stringValue == "duplicate",
                "\(replicated.body)\n\(instance.gateway.process.logLines.suffix(5).joined(separator: "\n"))")
    }
}

extension AdminGateway {
    var status: JSONValue? { try? get("/api/status").json }

    var readiness: Int { (try? Curl.get(gateway.baseURL + "/readyz"))?.status ?? 0 }
}
