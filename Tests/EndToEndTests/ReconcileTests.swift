import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// Reconciliation with Apple's Notification History and probes (issue 16), against
/// `FakeAppStoreAPI`, the only Apple in these tests: a real `storerelay serve`, real HTTPS,
/// real `kill -9`.
@Suite("Reconciliation with Apple end to end", .serialized)
struct ReconcileTests {
    static let bundleId = "com.acme.journal"
    let ca = TestCertificateAuthority.shared

    /// A production notification of the test app, signed now by the test CA.
    func notification(_ uuid: String = UUID().uuidString.lowercased()) throws -> (uuid: String, jws: String) {
        (uuid, try TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid))
    }

    func history(_ items: [(uuid: String, jws: String)], failed: Bool = false) -> JSONValue {
        .array(items.map { item in .object(JSONObject([("signedPayload", .string(item.jws)), ("failed", .bool(failed))])) })
    }

    func config(_ fake: FakeAppStoreAPI, every: String = "1h") -> String {
        Gateway.config("""
            trust-root ./test-root.pem
            environments production
            \(fake.apiURLLine)
            app \(Self.bundleId) {
                apple-id 1234567890
                \(fake.apiKeyLine)
                reconcile every \(every) overlap 2h
            }
            """)
    }

    /// `storerelay COMMAND --app ... --env production EXTRA`, reaching the gateway's admin
    /// listener on its ephemeral port (the token comes from DATA/admin.token).
    func command(_ name: String, _ gateway: Gateway, app: String = ReconcileTests.bundleId, _ extra: [String] = []) throws -> CommandResult {
        let admin = try gateway.process.waitForPort(listener: "admin")
        return try CommandRunner.storerelay(
            [name, "--app", app, "--env", "production", "--admin", "127.0.0.1:\(admin)"] + extra + ["--config", "routes.conf"],
            directory: gateway.directory)
    }

    func reconcile(_ gateway: Gateway, _ extra: [String] = []) throws -> CommandResult {
        try command("reconcile", gateway, extra)
    }

    func queued(_ gateway: Gateway) -> [JSONValue] {
        gateway.fileQueueLines("data/queues/all").compactMap { try? JSONValue.parse($0) }
    }

    func checkpoint(_ gateway: Gateway) -> Int64? {
        let path = gateway.directory.appendingPathComponent("data/reconcile/\(Self.bundleId).production.json")
        return (try? Data(contentsOf: path)).flatMap { try? JSONValue.parse(Array($0)) }?["checkpoint"]?.int64Value
    }

    /// Missed notifications come back once, marked `recoveredBy`; those Apple did deliver
    /// are duplicates and are not fanned out again; the checkpoint survives a restart, and
    /// the next pass starts one overlap before it.
    @Test func recoversWhatWasMissedOnceAndResumesFromTheCheckpoint() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["history": [], "pageSize": 2])
        let directory = try Gateway.directory(trusting: ca, "storerelay-reconcile")
        var gateway = try Gateway(config: config(fake), directory: directory)
        // The pass at start finds nothing and sets the checkpoint.
        #expect(fake.waitFor { $0.contains { $0["path"]?.stringValue == "/inApps/v1/notifications/history" } })
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "reconciliation finished" } != nil)

        let items = try (0..<5).map { _ in try notification() }
        for item in items.prefix(2) { #expect(try gateway.post(signedPayload: item.jws).status == 200) }
        try fake.control(["history": history(items), "pageSize": 2])
        let result = try reconcile(gateway, ["--since", "1h"])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        #expect(result.stdout.contains("found 5, already had 2, recovered 3, quarantined 0, failed 0 (3 pages)"), "\(result.stdout)")
        // Every request carried a valid token (the fake checks it with openssl).
        #expect(fake.requests.allSatisfy { $0["jwtError"] == .null }, "\(fake.requests.compactMap { $0["jwtError"]?.stringValue })")

        #expect(gateway.waitForFileQueue("data/queues/all") { $0.count >= 5 })
        let events = queued(gateway)
        for (index, item) in items.enumerated() {
            let copies = events.filter { $0["id"]?.stringValue == item.uuid }
            #expect(copies.count == 1, "\(item.uuid) delivered \(copies.count) times")
            #expect(copies.first?["recoveredBy"] == (index < 2 ? .null : "history"))
        }

        // The checkpoint is durable; after a restart the scheduled pass starts one overlap
        // (2h) before it.
        let saved = try #require(checkpoint(gateway))
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
        let before = fake.historyRequests.count
        gateway = try Gateway(config: config(fake), directory: directory)
        #expect(fake.waitFor { $0.filter { $0["path"]?.stringValue == "/inApps/v1/notifications/history" }.count > before })
        let resumed = fake.historyRequests[before]
        #expect(resumed["body"]?["startDate"]?.int64Value == saved - 7_200_000)
        #expect(resumed["query"]?["paginationToken"] == nil)
    }

    /// A notification recovered from Apple's history starts its event's trace as a posted
    /// one does (`tracing otlp`): a receive span, INTERNAL and marked `recovered_by`, with the
    /// verify and journal spans under it, so its delivery attempts have a parent that exists.
    @Test func aRecoveredNotificationStartsItsTrace() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["history": [], "pageSize": 10])
        let collector = try OTLPCollector()
        let directory = try Gateway.directory(trusting: ca, "storerelay-reconcile-trace")
        let gateway = try Gateway(config: config(fake) + "\ntracing otlp \(collector.url)\n", directory: directory)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "reconciliation finished" } != nil)
        let item = try notification()
        try fake.control(["history": history([item]), "pageSize": 10])
        let result = try reconcile(gateway, ["--since", "1h"])
        #expect(result.stdout.contains("recovered 1"), "\(result.stdout) \(result.stderr)")

        #expect(pollUntil(timeout: 15) { collector.spans.contains { $0["name"]?.stringValue == "receive" } })
        let receive = try #require(collector.spans.first { $0["name"]?.stringValue == "receive" })
        let attributes = receive["attributes"]?.arrayValue ?? []
        let value = { (key: String) in attributes.first { $0["key"]?.stringValue == key }?["value"]?["stringValue"]?.stringValue }
        #expect(value("storerelay.event.id") == item.uuid)
        #expect(value("storerelay.recovered_by") == "history")
        #expect(receive["kind"]?.int64Value == 1, "INTERNAL: fetched, not served")
        #expect(pollUntil(timeout: 15) { collector.spans.filter { ["verify", "journal"].contains($0["name"]?.stringValue ?? "") }.count == 2 })
        for child in collector.spans where ["verify", "journal"].contains(child["name"]?.stringValue ?? "") {
            #expect(child["parentSpanId"] == receive["spanId"] && child["traceId"] == receive["traceId"])
        }
    }

    /// Apple's 429 is waited out until its `Retry-After` (UNIX milliseconds), a retryable 5xx
    /// is retried, and an expired pagination token fetches the window again.
    @Test func waitsOutRateLimitsRetriesAndRestartsAnExpiredWindow() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["history": [], "pageSize": 2])
        let gateway = try Gateway(config: config(fake, every: "24h"), directory: try Gateway.directory(trusting: ca, "storerelay-reconcile-429"))
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "reconciliation finished" } != nil)

        let items = try (0..<3).map { _ in try notification() }
        try fake.control(["history": history(items), "pageSize": 2, "script": [
            ["status": 429, "retryAfterMs": 1500, "errorCode": 4290000],
            ["status": 500, "errorCode": 5000001],
            ["expireToken": true],
        ]])
        let before = fake.historyRequests.count
        let result = try reconcile(gateway, ["--since", "1h"])
        #expect(result.status == 0, "\(result.stdout) \(result.stderr)")
        // Page 1 came twice: its two notifications were duplicates the second time.
        #expect(result.stdout.contains("found 5, already had 2, recovered 3"), "\(result.stdout)")
        #expect(result.stdout.contains("fetched again 1 time"), "\(result.stdout)")
        let requests = Array(fake.historyRequests.dropFirst(before))
        let statuses = requests.compactMap { $0["status"]?.int64Value }
        // 429, 500, page 1, expired token on page 2, page 1 again, page 2.
        #expect(statuses == [429, 500, 200, 400, 200, 200], "\(statuses)")
        let limited = try #require(requests.first?["at"]?.int64Value), next = try #require(requests.dropFirst().first?["at"]?.int64Value)
        #expect(next - limited >= 1_400, "asked again after \(next - limited) ms, before Retry-After")
        #expect(next - limited < 10_000)
        #expect(gateway.waitForFileQueue("data/queues/all") { $0.count >= 3 })
        #expect(Set(queued(gateway).compactMap { $0["id"]?.stringValue }) == Set(items.map(\.uuid)))
        #expect(queued(gateway).count == 3, "a restarted window delivered something twice")
    }

    /// A 401 marks the app's reconciliation failed in status and metrics, the checkpoint
    /// stays, and nothing else stops.
    @Test func unauthorizedMarksTheReconciliationFailed() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["unauthorized": true])
        let directory = try Gateway.directory(trusting: ca, "storerelay-reconcile-401")
        let gateway = try Gateway(config: config(fake), directory: directory)
        let failed = gateway.process.waitForLog { $0["message"]?.stringValue == "reconciliation failed" }
        #expect(failed?["error"]?.stringValue?.contains("401") == true, "\(String(describing: failed))")
        #expect(checkpoint(gateway) == nil)
        let result = try reconcile(gateway)
        #expect(result.status == 1)
        #expect(result.stderr.contains("reconciliation failed") && result.stderr.contains("api-key"), "\(result.stderr)")

        let admin = try gateway.process.waitForPort(listener: "admin")
        let token = try String(contentsOf: directory.appendingPathComponent("data/admin.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let status = try Curl.get("http://127.0.0.1:\(admin)/api/status", headers: ["Authorization: Bearer \(token)"])
        let entry = try #require(status.json?["reconciliation"]?.arrayValue?.first)
        #expect(entry["app"]?.stringValue == Self.bundleId)
        #expect(entry["lastRun"]?["outcome"]?.stringValue == "failed")
        #expect(entry["lastSuccess"] == .null)
        let metrics = try Curl.get("http://127.0.0.1:\(admin)/metrics")
        #expect(metrics.body.contains(#"storerelay_reconcile_runs_total{app="com.acme.journal",environment="production",outcome="failed"} 2"#),
                "\(metrics.body)")
        let page = try Curl.get("http://127.0.0.1:\(admin)/", headers: ["Authorization: Bearer \(token)"])
        #expect(page.body.contains("Reconciliation with Apple") && page.body.contains(#"<span class="bad">failed</span>"#))
        // Notifications are still accepted.
        #expect(try gateway.post(signedPayload: notification().jws).json?["status"]?.stringValue == "accepted")
    }

    /// The checkpoint says "everything before it was asked for": a pass moves it only when its
    /// window reached back to it, asked for everything (not only Apple's failures) and stored
    /// it (not a dry run). A checkpoint file that does not read back fails the pass untouched.
    @Test func theCheckpointMovesOnlyAfterAWindowReachingIt() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["history": []])
        let directory = try Gateway.directory(trusting: ca, "storerelay-reconcile-checkpoint")
        let gateway = try Gateway(config: config(fake, every: "24h"), directory: directory)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "reconciliation finished" } != nil)
        let first = try #require(checkpoint(gateway))
        for extra in [["--since", "1m"], ["--since", "3h", "--only-failures"], ["--since", "3h", "--dry-run"]] {
            let result = try reconcile(gateway, extra)
            #expect(result.status == 0, "\(extra): \(result.stderr)")
            #expect(checkpoint(gateway) == first, "\(extra) moved the checkpoint")
        }
        #expect(try reconcile(gateway, ["--since", "3h"]).status == 0)
        #expect(try #require(checkpoint(gateway)) > first)

        let path = directory.appendingPathComponent("data/reconcile/\(Self.bundleId).production.json")
        try Data("{\"checkpoint\":".utf8).write(to: path)
        let refused = try reconcile(gateway)
        #expect(refused.status == 1 && refused.stderr.contains("cannot be read"), "\(refused.stderr)")
        #expect(try Data(contentsOf: path) == Data("{\"checkpoint\":".utf8))
    }

    /// `kill -9` in the middle of a pass loses nothing: the checkpoint did not move, so the
    /// next start fetches again from one overlap before it, and what was stored already comes
    /// back as duplicates.
    @Test func aKillDuringAPassLosesNothing() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["history": [], "pageSize": 2])
        let directory = try Gateway.directory(trusting: ca, "storerelay-reconcile-kill")
        var gateway = try Gateway(config: config(fake), directory: directory, host: .childProcess)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "reconciliation finished" } != nil)
        let saved = try #require(checkpoint(gateway))

        let items = try (0..<6).map { _ in try notification() }
        try fake.control(["history": history(items), "pageSize": 2, "pageDelayMs": 700])
        let before = fake.historyRequests.count
        // The pass runs in the gateway; the command waits for it in the background.
        DispatchQueue.global().async { [gateway] in _ = try? reconcile(gateway, ["--since", "1h"]) }
        #expect(fake.waitFor { $0.filter { $0["path"]?.stringValue == "/inApps/v1/notifications/history" }.count >= before + 2 })
        gateway.process.send(SIGKILL)
        _ = gateway.process.waitForExit()
        #expect(checkpoint(gateway) == saved)

        try fake.control(["history": history(items), "pageSize": 2])
        let restartedAt = fake.historyRequests.count
        gateway = try Gateway(config: config(fake), directory: directory)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "reconciliation finished" } != nil)
        #expect(fake.historyRequests[restartedAt]["body"]?["startDate"]?.int64Value == saved - 7_200_000)
        #expect(gateway.waitForFileQueue("data/queues/all") { lines in
            Set(lines.compactMap { try? JSONValue.parse($0)["id"]?.stringValue }).isSuperset(of: items.map(\.uuid))
        })
        #expect(try #require(checkpoint(gateway)) > saved)
    }

    /// `storerelay probe`: Apple's TEST notification arrives (exit 0, round trip printed), or
    /// it does not within the timeout (exit 1, Apple's attempts printed).
    @Test func probeReportsTheRoundTripOrItsAbsence() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["history": []])
        let directory = try Gateway.directory(trusting: ca, "storerelay-probe")
        let gateway = try Gateway(config: config(fake, every: "24h"), directory: directory)
        let uuid = UUID().uuidString.lowercased()
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let test = try ca.signJWS(payload: """
            {"notificationType":"TEST","notificationUUID":"\(uuid)","version":"2.0","signedDate":\(now),\
            "data":{"appAppleId":1234567890,"bundleId":"com.acme.journal","environment":"Production"}}
            """)
        try fake.control(["history": [], "test": ["signedPayload": .string(test), "deliverTo": .string(gateway.notificationURL), "delayMs": 300]])
        let arrived = try command("probe", gateway, ["--timeout", "20s"])
        #expect(arrived.status == 0, "\(arrived.stdout) \(arrived.stderr)")
        #expect(arrived.stdout.contains("arrived: \(uuid) in "), "\(arrived.stdout)")
        #expect(arrived.stdout.contains("SUCCESS"))

        let lost = try ca.signJWS(payload: """
            {"notificationType":"TEST","notificationUUID":"\(UUID().uuidString.lowercased())","version":"2.0","signedDate":\(now),\
            "data":{"appAppleId":1234567890,"bundleId":"com.acme.journal","environment":"Production"}}
            """)
        try fake.control(["history": [], "test": ["signedPayload": .string(lost), "deliverTo": .string(gateway.notificationURL),
                                                  "delayMs": 100, "deliver": false]])
        let timedOut = try command("probe", gateway, ["--timeout", "3s"])
        #expect(timedOut.status == 1, "\(timedOut.stdout) \(timedOut.stderr)")
        #expect(timedOut.stdout.contains("timeout") && timedOut.stdout.contains("NO_RESPONSE"), "\(timedOut.stdout)")

        let unknown = try command("probe", gateway, app: "com.other")
        #expect(unknown.status == 1 && unknown.stderr.contains("api-key"), "\(unknown.stderr)")
    }
}
