import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Pause and resume end to end (SPEC "Delivery controls"): a paused destination starts no
/// attempt and keeps its backlog, stays paused across a restart (single-node: the file in the
/// data directory; cluster mode: the key on the shared server, seen by every instance), and
/// once resumed delivers every event once.
@Suite("Pause and resume end to end", .serialized)
struct PauseEndToEndTests {
    let ca: TestCertificateAuthority
    init() throws { ca = try TestCertificateAuthority() }

    private func post(_ gateway: Gateway, count: Int) throws -> [String] {
        try (0..<count).map { _ in
            let uuid = UUID().uuidString.lowercased()
            let answer = try gateway.post(signedPayload: TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid))
            #expect(answer.status == 200)
            return uuid
        }
    }

    private func stop(_ gateway: Gateway) {
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
    }

    /// `/api/destinations`' entry for `name`.
    private func listed(_ admin: AdminGateway, _ name: String) -> JSONValue? {
        (try? admin.get("/api/destinations"))?.json?["items"]?.arrayValue?.first { $0["name"]?.stringValue == name }
    }

    /// Webhook requests per webhook-id on `path`.
    private func counts(_ sink: WebhookSink, _ path: String) -> [String: Int] {
        sink.requests(path: path).reduce(into: [:]) { $0[$1["headers"]?["webhook-id"]?.stringValue ?? "", default: 0] += 1 }
    }

    @Test func aPausedDestinationKeepsItsBacklogAcrossARestartAndDeliversItOnceResumed() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: ca, "storerelay-pause")
        let config = Gateway.bareConfig("""
            trust-root ./test-root.pem
            \(webhookDestination("hook", sink.url("/ok")))
            \(webhookDestination("other", sink.url("/ok?other")))
            route * * * -> hook, other
            """)
        let first = try AdminGateway(Gateway(config: config, directory: directory))
        let paused = try first.post("/api/destinations/hook/pause")
        #expect(paused.status == 200 && paused.json?["paused"] == true)
        var ids = try post(first.gateway, count: 5)
        // The other destination shows the events went out; the paused one got none of them.
        #expect(sink.waitFor { $0.filter { $0["path"]?.stringValue == "/ok?other" }.count == 5 })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(sink.requests(path: "/ok").isEmpty)
        #expect(listed(first, "hook")?["state"] == "paused" && listed(first, "hook")?["queueDepth"]?.int64Value == 5)
        #expect(listed(first, "other")?["state"] == "active")
        let metrics = try first.metrics
        #expect(metrics.contains(#"storerelay_destination_paused{destination="hook"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"storerelay_destination_paused{destination="other"} 0"#))
        stop(first.gateway)
        let file = try String(contentsOf: directory.appendingPathComponent("data/paused-destinations.json"), encoding: .utf8)
        #expect(file == #"{"paused":["hook"]}"#)

        let second = try AdminGateway(Gateway(config: config, directory: directory))
        #expect(listed(second, "hook")?["state"] == "paused", "paused across the restart")
        ids += try post(second.gateway, count: 1)
        #expect(sink.waitFor { $0.filter { $0["path"]?.stringValue == "/ok?other" }.count == 6 })
        Thread.sleep(forTimeInterval: 1)
        #expect(sink.requests(path: "/ok").isEmpty, "nothing is delivered after the restart either")
        #expect(listed(second, "hook")?["queueDepth"]?.int64Value == 6)

        let resumed = try second.post("/api/destinations/hook/resume")
        #expect(resumed.status == 200 && resumed.json?["changed"] == true)
        #expect(sink.waitFor { $0.filter { $0["path"]?.stringValue == "/ok" }.count >= 6 })
        Thread.sleep(forTimeInterval: 0.5)
        #expect(counts(sink, "/ok") == Dictionary(uniqueKeysWithValues: ids.map { ($0, 1) }), "each event once")
        #expect(listed(second, "hook")?["state"] == "active")
        #expect(second.gateway.deadLetters.isEmpty, "nothing is dead-lettered for the pause")
        stop(second.gateway)
        #expect(try String(contentsOf: directory.appendingPathComponent("data/paused-destinations.json"), encoding: .utf8)
            == #"{"paused":[]}"#)
    }

    /// A reload that redefines a paused destination builds its new queue paused.
    @Test func aReloadKeepsARedefinedDestinationPaused() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: ca, "storerelay-pause-reload")
        func config(_ timeout: String) -> String {
            Gateway.bareConfig("""
                trust-root ./test-root.pem
                \(webhookDestination("hook", sink.url("/ok"), options: "timeout \(timeout)"))
                route * * * -> hook
                """)
        }
        let admin = try AdminGateway(Gateway(config: config("2s"), directory: directory))
        #expect(try admin.post("/api/destinations/hook/pause").status == 200)
        let ids = try post(admin.gateway, count: 2)
        try config("3s").write(to: admin.gateway.process.configPath, atomically: true, encoding: .utf8)
        admin.gateway.process.send(SIGHUP)
        #expect(admin.gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        Thread.sleep(forTimeInterval: 1)
        #expect(sink.requests.isEmpty && listed(admin, "hook")?["state"] == "paused")
        #expect(try admin.post("/api/destinations/hook/resume").status == 200)
        #expect(sink.waitFor { $0.count >= 2 })
        Thread.sleep(forTimeInterval: 0.3)
        #expect(counts(sink, "/ok") == Dictionary(uniqueKeysWithValues: ids.map { ($0, 1) }))
        stop(admin.gateway)
    }

    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
    func aPauseThroughOneInstanceHoldsOnTheOtherAndAcrossItsRestart() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let body = webhookDestination("hook", sink.url("/ok")) + "\nroute * * * -> hook"
        func start(_ instance: String) throws -> AdminGateway {
            let directory = try Gateway.directory(trusting: ca, "storerelay-pause-\(instance)")
            return try AdminGateway(Gateway(config: Gateway.bareConfig("""
                trust-root ./test-root.pem
                cluster redis://127.0.0.1:\(server.port) {
                    instance-id \(instance)
                    claim-after 2s
                }
                \(body)
                """), directory: directory))
        }
        let a = try start("a")
        var b = try start("b")
        #expect(try a.post("/api/destinations/hook/pause").json?["paused"] == true)
        #expect(try a.post("/api/destinations/nowhere/pause").status == 404)
        // Instance b reads the pause at its next tick.
        #expect(pollUntil(timeout: 10) { listed(b, "hook")?["state"] == "paused" })
        var ids = try post(a.gateway, count: 3) + post(b.gateway, count: 3)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(sink.requests.isEmpty, "neither instance delivers while paused")

        stop(b.gateway)
        b = try start("b")
        #expect(pollUntil(timeout: 10) { listed(b, "hook")?["state"] == "paused" }, "b comes back paused")
        ids += try post(b.gateway, count: 2)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(sink.requests.isEmpty)

        #expect(try b.post("/api/destinations/hook/resume").json?["changed"] == true)
        #expect(sink.waitFor { $0.count >= ids.count }, "\(sink.requests.count) of \(ids.count)")
        Thread.sleep(forTimeInterval: 1)
        #expect(counts(sink, "/ok") == Dictionary(uniqueKeysWithValues: ids.map { ($0, 1) }), "each event once")
        #expect(pollUntil(timeout: 10) { listed(a, "hook")?["state"] == "active" }, "a follows the resume")
        stop(a.gateway)
        stop(b.gateway)
    }
}
