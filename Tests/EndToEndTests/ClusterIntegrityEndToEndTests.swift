import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Issue 26 end to end: a real `storerelay serve` in cluster mode on a real `redis-server`,
/// whose data is written to, flushed and emptied behind its back with `redis-cli`, as an
/// operator or an attacker with access to the server would.
@Suite(.serialized, .enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
struct ClusterIntegrityEndToEndTests {
    static let bundleId = "com.acme.journal"
    static let clusterKey = "e2e-cluster-key-0123456789abcdefghijkl"
    static let prefix = "storerelay:{storerelay}:"
    let ca = TestCertificateAuthority.shared

    /// One gateway in cluster mode, sealing with `clusterKey`, and its admin listener.
    struct Instance {
        let gateway: Gateway
        let admin: String
        let auth: [String]

        init(_ server: RedisServerProcess, ca: TestCertificateAuthority, body: String) throws {
            let directory = try Gateway.directory(trusting: ca, "storerelay-cluster-integrity")
            gateway = try Gateway(config: Gateway.bareConfig("""
                trust-root ./test-root.pem
                environments production
                cluster redis://127.0.0.1:\(server.port) {
                    instance-id a
                    cluster-key \(ClusterIntegrityEndToEndTests.clusterKey)
                }
                \(body)
                """), directory: directory)
            admin = "http://127.0.0.1:\(try gateway.process.waitForPort(listener: "admin"))"
            let token = try String(contentsOf: directory.appendingPathComponent("data/admin.token"), encoding: .utf8)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            auth = ["Authorization: Bearer \(token)"]
        }

        func fetch(_ path: String) -> JSONValue? { (try? Curl.get(admin + path, headers: auth))?.json }
        var metrics: String { (try? Curl.get(admin + "/metrics").body) ?? "" }
        var status: JSONValue? { fetch("/api/status")?["cluster"] }
    }

    /// `redis-cli -p PORT ARGS...`: its output, trimmed.
    @discardableResult
    func redis(_ server: RedisServerProcess, _ arguments: String...) throws -> String {
        try CommandRunner.run("redis-cli", ["-p", String(server.port)] + arguments, check: true).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func notification(_ uuid: String = UUID().uuidString.lowercased()) throws -> (uuid: String, jws: String) {
        (uuid, try TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid))
    }

    /// The reproduced attack: a copy of a delivered event turned into a REFUND and queued on
    /// the stream was delivered with `verified: true` and a valid webhook signature. Now it
    /// is dead-lettered `tampered`, counted, and logged as an error; nothing reaches the
    /// webhook but the genuine event.
    @Test func aForgedRefundWrittenIntoTheServerIsNeverDelivered() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let instance = try Instance(server, ca: ca, body: webhookDestination("hook", sink.url("/ok")) + "\nroute * * * -> hook")
        let genuine = try notification()
        #expect(try instance.gateway.post(signedPayload: genuine.jws).status == 200)
        #expect(sink.waitFor { $0.count == 1 })

        let record = try redis(server, "GET", Self.prefix + "event:" + genuine.uuid)
        #expect(record.hasPrefix("sr1."), "sealed on the server")
        let forgedId = UUID().uuidString.lowercased()
        let forged = record.replacingOccurrences(of: "SUBSCRIBED", with: "REFUND").replacingOccurrences(of: genuine.uuid, with: forgedId)
        try redis(server, "SET", Self.prefix + "event:" + forgedId, forged)
        try redis(server, "XADD", Self.prefix + "queue:hook", "*", "id", forgedId)

        let error = instance.gateway.process.waitForLog { $0["message"]?.stringValue == "cluster record failed its integrity check; it is not delivered" }
        #expect(error?["level"]?.stringValue == "error" && error?["event.id"]?.stringValue == forgedId, "\(String(describing: error))")
        #expect(pollUntil(timeout: 10) { instance.metrics.contains("storerelay_cluster_tampered_total{record=\"event\"} 1") }, "\(instance.metrics)")
        let letters = instance.fetch("/api/dead-letters?reason=tampered")?["items"]?.arrayValue ?? []
        #expect(letters.count == 1 && letters.first?["eventId"]?.stringValue == forgedId && letters.first?["event"] == .null)
        let id = letters.first?["id"]?.stringValue ?? ""
        let replay = try Curl.post(instance.admin + "/api/dead-letters/\(id)/replay?force=1", json: "{}", headers: instance.auth)
        #expect(replay.status == 409 && replay.body.contains("was not replayed"), "\(replay.body)")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(sink.requests.count == 1 && sink.requests.first?["headers"]?["webhook-id"]?.stringValue == genuine.uuid)
        #expect(!sink.requests.contains { $0["body"]?.stringValue?.contains("REFUND") == true })
        #expect(instance.status?["integrity"]?.stringValue == "sealed")
    }

    /// FLUSHALL, then a restart without the append-only file, while five acknowledged
    /// notifications wait for a retry: each loss is counted, logged as an error, shown in
    /// status, and Apple's Notification History (the fake) gives the five back, each time.
    @Test func aServerThatLostItsDataIsNoticedAndRecoveredFromApple() throws {
        let server = try RedisServerProcess()
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["history": [], "pageSize": 20])
        // Nothing listens there: every delivery waits an hour for its retry.
        let unreachable = "http://127.0.0.1:\(try RedisServerProcess.freePort())/hook"
        let instance = try Instance(server, ca: ca, body: """
            \(fake.apiURLLine)
            app \(Self.bundleId) {
                apple-id 1234567890
                \(fake.apiKeyLine)
                reconcile every 1h overlap 2h
            }
            \(webhookDestination("hook", unreachable, options: "backoff 1h 1h\nmax-attempts 10"))
            route * * * -> hook
            """)
        let process = instance.gateway.process
        #expect(process.waitForLog { $0["message"]?.stringValue == "reconciliation finished" } != nil, "the pass at start")
        let items = try (0..<5).map { _ in try notification() }
        for item in items { #expect(try instance.gateway.post(signedPayload: item.jws).status == 200) }
        #expect(pollUntil(timeout: 10) { items.allSatisfy { instance.fetch("/api/events/\($0.uuid)") != nil } })
        try fake.control(["history": .array(items.map { .object(JSONObject([("signedPayload", .string($0.jws))])) }), "pageSize": 20])

        let losses: [() throws -> Void] = [{ try redis(server, "FLUSHALL") }, { try server.restartEmpty() }]
        for (round, loseData) in losses.enumerated() {
            let historyBefore = fake.historyRequests.count
            let lost = Timestamp.now()
            try loseData()
            let logged = process.waitForLog { $0["message"]?.stringValue?.hasPrefix("cluster server lost its data") == true && $0["level"]?.stringValue == "error" }
            #expect(logged != nil, "round \(round)")
            #expect(pollUntil(timeout: 30) {
                instance.status?["resets"]?.arrayValue?.count == round + 1
                    && instance.status?["resets"]?.arrayValue?.last?["recovery"]?.arrayValue?.first?["outcome"]?.stringValue == "success"
            }, "round \(round): \(String(describing: instance.status?["resets"]))")
            let reset = try #require(instance.status?["resets"]?.arrayValue?.last)
            #expect(reset["cause"]?.stringValue == "missing")
            #expect(reset["recovery"]?.arrayValue?.first?["report"]?["recovered"]?.int64Value == 5, "\(reset)")
            #expect(reset["unrecoverable"]?.arrayValue?.first?.stringValue?.contains("version 1") == true)
            // Asked from one overlap (2h) before the last moment the old epoch was seen.
            let asked = fake.historyRequests.dropFirst(historyBefore).compactMap { $0["body"]?["startDate"]?.int64Value }
            #expect(asked.contains { $0 <= lost.milliseconds - 7_200_000 && $0 > lost.milliseconds - 7_200_000 - 10_000 }, "\(asked) vs \(lost.milliseconds)")
            // Each is on the server again, recovered, and waiting for its delivery.
            for item in items {
                let event = instance.fetch("/api/events/\(item.uuid)")
                #expect(event?["event"]?["recoveredBy"]?.stringValue == "history", "\(String(describing: event))")
                #expect(event?["deliveries"]?.arrayValue?.first?["state"]?.stringValue == "pending")
            }
            #expect(instance.metrics.contains("storerelay_cluster_server_resets_total \(round + 1)"), "\(instance.metrics)")
        }
        let page = try Curl.get(instance.admin + "/", headers: instance.auth)
        #expect(page.body.contains("The cluster server lost its data"), "\(page.body.prefix(2000))")
    }
}
