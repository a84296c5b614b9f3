import Foundation
import Testing
import StoreRelayCore
import StoreRelayGateway
import StoreRelayTestSupport

/// The operational events whose causes live outside the delivery core, each caused for real:
/// Apple's API (the fake) refusing a reconciliation and a probe, a pass that recovers missed
/// notifications, and in cluster mode a forged record and a server that lost its data.
@Suite("Operational events from reconciliation and cluster mode", .serialized)
struct OperationalEventSourcesTests {
    static let bundleId = "com.acme.journal"
    let ca = TestCertificateAuthority.shared

    private func events(_ sink: WebhookSink) -> [JSONValue] {
        sink.requests(path: "/ok").compactMap { try? JSONValue.parse($0["body"]?.stringValue ?? "") }
    }

    private func events(_ sink: WebhookSink, _ type: String) -> [JSONValue] {
        events(sink).filter { $0["type"]?.stringValue == type }
    }

    private func app(_ fake: FakeAppStoreAPI) -> String {
        """
        \(fake.apiURLLine)
        app \(Self.bundleId) {
            apple-id 1234567890
            \(fake.apiKeyLine)
            reconcile every 1h overlap 2h
        }
        """
    }

    /// Apple answering 401: the pass at start fails (`reconcile.failed`) and so does a probe
    /// (`probe.failed`); once Apple answers with notifications the gateway missed, a pass
    /// recovers them (`reconcile.recovered` with the count).
    @Test func reconcileFailedProbeFailedThenRecovered() throws {
        let fake = try FakeAppStoreAPI(bundleId: Self.bundleId)
        try fake.control(["unauthorized": true])
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: ca, "storerelay-ops-reconcile")
        let gateway = try Gateway(config: Gateway.config("""
            trust-root ./test-root.pem
            environments production
            \(app(fake))
            \(webhookDestination("ops", sink.url("/ok")))
            operational-events -> ops
            """), directory: directory)
        #expect(sink.waitFor { _ in !events(sink, "reconcile.failed").isEmpty })
        let failed = try #require(events(sink, "reconcile.failed").first)
        #expect(failed["app"]?.stringValue == Self.bundleId && failed["environment"]?.stringValue == "production")
        #expect(failed["error"]?.stringValue?.isEmpty == false, "\(failed)")

        let admin = try AdminGateway(gateway)
        // Never succeeded: the series is there, at 0, for the staleness alert to see.
        let metrics = try admin.metrics
        #expect(metrics.contains(#"storerelay_reconcile_last_success_timestamp_seconds{app="com.acme.journal",environment="production"} 0"#), "\(metrics)")
        #expect(metrics.contains(#"storerelay_reconcile_runs_total{app="com.acme.journal",environment="production",outcome="failed"} 1"#), "\(metrics)")
        let probe = try admin.post("/api/probe", json: #"{"app":"com.acme.journal","environment":"production","timeout":"5s"}"#)
        #expect(probe.status == 200, "\(probe.body)")
        #expect(sink.waitFor { _ in !events(sink, "probe.failed").isEmpty })
        let probeFailed = try #require(events(sink, "probe.failed").first)
        #expect(probeFailed["outcome"]?.stringValue == "failed" && probeFailed["app"]?.stringValue == Self.bundleId)

        let missed = try (0..<3).map { _ in try TestChainTests.notification(uuid: UUID().uuidString.lowercased(), ca: ca, variant: .valid) }
        try fake.control(["history": .array(missed.map { .object(JSONObject([("signedPayload", .string($0))])) }), "pageSize": 20])
        let pass = try admin.post("/api/reconcile", json: #"{"app":"com.acme.journal","environment":"production","since":"1h"}"#)
        #expect(pass.status == 200, "\(pass.body)")
        #expect(sink.waitFor { _ in !events(sink, "reconcile.recovered").isEmpty })
        #expect(events(sink, "reconcile.recovered").first?["count"]?.int64Value == 3)
        #expect(sink.requests(path: "/ok").allSatisfy { $0["signatureValid"] == true })
    }

    /// Cluster mode: a record forged on the server (`cluster.tampered`, counted per kind of
    /// record) and a FLUSHALL (`cluster.server_reset`).
    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
    func clusterTamperedAndServerReset() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: ca, "storerelay-ops-cluster")
        let gateway = try Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            environments production
            cluster redis://127.0.0.1:\(server.port) {
                instance-id a
                cluster-key e2e-cluster-key-0123456789abcdefghijkl
            }
            destination all file ./data/queues/all
            \(webhookDestination("ops", sink.url("/ok")))
            route * * * -> all
            operational-events -> ops
            """), directory: directory, hooks: GatewayTestHooks(operationalBatchWindow: .seconds(1)))
        let uuid = UUID().uuidString.lowercased()
        let jws = try TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid)
        #expect(try gateway.post(signedPayload: jws).status == 200)
        #expect(gateway.waitForFileQueue("data/queues/all/a") { $0.count == 1 }, "cluster mode writes under the instance id")

        let prefix = "storerelay:{storerelay}:"
        func redis(_ arguments: String...) throws -> String {
            try CommandRunner.run("redis-cli", ["-p", String(server.port)] + arguments, check: true).stdout
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let record = try redis("GET", prefix + "event:" + uuid)
        let forgedId = UUID().uuidString.lowercased()
        _ = try redis("SET", prefix + "event:" + forgedId, record.replacingOccurrences(of: uuid, with: forgedId))
        _ = try redis("XADD", prefix + "queue:all", "*", "id", forgedId)
        #expect(sink.waitFor { _ in !events(sink, "cluster.tampered").isEmpty })
        let tampered = try #require(events(sink, "cluster.tampered").first)
        #expect(tampered["record"]?.stringValue == "event" && tampered["count"]?.int64Value == 1, "\(tampered)")

        _ = try redis("FLUSHALL")
        #expect(sink.waitFor(timeout: 30) { _ in !events(sink, "cluster.server_reset").isEmpty })
        let reset = try #require(events(sink, "cluster.server_reset").first)
        #expect(reset["cause"]?.stringValue == "missing" && reset["lostSince"]?.stringValue != nil && reset["instance"]?.stringValue == "a", "\(reset)")
    }
}
