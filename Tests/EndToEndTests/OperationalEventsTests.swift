import Foundation
import Testing
import StoreRelayCore
import StoreRelayGateway
import StoreRelayTestSupport

/// Operational events end to end (issue 28 point 3): the gateway in this process, a real
/// webhook receiver (the Python sink, which checks the Standard Webhooks signature on its
/// own), each event caused for real: a failing receiver, rejected events, a quiet app, a
/// disk threshold no disk meets.
@Suite("Operational events end to end", .serialized)
struct OperationalEventsTests {
    let signer = testSigner

    /// Windows short enough for a test: dead letters counted for 1 s, watches checking
    /// every 200 ms; the silence of routes.conf's default (6 h) unless a test shortens it.
    static func hooks(intakeSilence: Duration? = nil) -> GatewayTestHooks {
        GatewayTestHooks(operationalBatchWindow: .seconds(1), intakeSilence: intakeSilence, operationalCheckInterval: .milliseconds(200))
    }

    private func gateway(_ body: String, hooks: GatewayTestHooks = OperationalEventsTests.hooks()) throws -> Gateway {
        let directory = try Gateway.trustingDirectory("storerelay-ops")
        return try Gateway(config: Gateway.bareConfig("trust-root ./test-root.pem\n" + body), directory: directory, hooks: hooks)
    }

    /// The operational events the sink received at `path`: their parsed bodies.
    private func events(_ sink: WebhookSink, _ path: String) -> [JSONValue] {
        sink.requests(path: path).compactMap { request in
            guard request["headers"]?["webhook-id"]?.stringValue?.hasPrefix("op_") == true else { return nil }
            return try? JSONValue.parse(request["body"]?.stringValue ?? "")
        }
    }

    private func post(_ gateway: Gateway, bundleId: String = "com.acme.journal") throws {
        let body = try signer.body(uuid: UUID().uuidString.lowercased(), bundleId: bundleId)
        #expect(try gateway.post(json: body).status == 200)
    }

    /// A receiver failing five times in a row opens the breaker; its recovery closes it.
    /// Each is one signed event with `type`, `at` and the destination.
    @Test func breakerOpenedAndClosed() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("billing", sink.url("/flaky/5"), options: "max-attempts 8"))
            \(webhookDestination("ops", sink.url("/ok")))
            route * * * -> billing
            operational-events -> ops
            """)
        try post(gateway)
        #expect(sink.waitFor { _ in events(sink, "/ok").count >= 2 })
        let received = events(sink, "/ok")
        #expect(received.map { $0["type"]?.stringValue } == ["destination.breaker_opened", "destination.breaker_closed"])
        let opened = try #require(received.first)
        #expect(opened["destination"]?.stringValue == "billing")
        #expect(opened["error"]?.stringValue?.contains("503") == true)
        #expect(opened["at"]?.stringValue.flatMap { Timestamp(iso8601: $0) } != nil)
        #expect(opened["id"]?.stringValue?.hasPrefix("op_") == true)
        let requests = sink.requests(path: "/ok")
        #expect(requests.allSatisfy { $0["signatureValid"] == true })
        #expect(requests.first?["headers"]?["storerelay-type"]?.stringValue == "destination.breaker_opened")
        // billing got its event in the end: the sixth attempt, after the probe.
        #expect(sink.requests(path: "/flaky/5").count == 6)
    }

    /// Rejected events make dead letters; they are counted per destination and told once a
    /// window, not once each.
    @Test func deadLettersAreBatchedPerDestination() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("strict", sink.url("/bad")))
            \(webhookDestination("ops", sink.url("/ok")))
            route * * * -> strict
            operational-events -> ops
            """)
        for _ in 0..<3 { try post(gateway) }
        #expect(gateway.waitForDeadLetterCount { $0 == 3 })
        let total: ([JSONValue]) -> Int64 = { $0.compactMap { $0["count"]?.int64Value }.reduce(0, +) }
        #expect(sink.waitFor { _ in total(events(sink, "/ok").filter { $0["type"]?.stringValue == "dead_letter.created" }) == 3 })
        let batches = events(sink, "/ok").filter { $0["type"]?.stringValue == "dead_letter.created" }
        // Three letters in well under a second: one batch, two if a window ended between them.
        #expect((1...2).contains(batches.count), "\(batches)")
        #expect(batches.allSatisfy { $0["destination"]?.stringValue == "strict" })
        #expect(batches.compactMap { $0["reasons"]?["rejected"]?.int64Value }.reduce(0, +) == 3)
    }

    /// An app and environment heard from and then quiet for `intake-silence` is reported
    /// silent once; its next notification reports it resumed.
    @Test func intakeSilentThenResumed() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            destination all file ./data/queues/all
            \(webhookDestination("ops", sink.url("/ok")))
            route * * * -> all
            operational-events -> ops
            """, hooks: Self.hooks(intakeSilence: .seconds(1)))
        try post(gateway)
        #expect(sink.waitFor { _ in events(sink, "/ok").contains { $0["type"]?.stringValue == "intake.silent" } })
        // Told once, however many checks see it silent.
        Thread.sleep(forTimeInterval: 0.6)
        let silent = events(sink, "/ok").filter { $0["type"]?.stringValue == "intake.silent" }
        #expect(silent.count == 1)
        #expect(silent.first?["app"]?.stringValue == "com.acme.journal")
        #expect(silent.first?["environment"]?.stringValue == "sandbox")
        #expect(silent.first?["silenceSeconds"]?.int64Value == 1)
        try post(gateway)
        #expect(sink.waitFor { _ in events(sink, "/ok").contains { $0["type"]?.stringValue == "intake.resumed" } })
        let metrics = try AdminGateway(gateway).metrics
        #expect(metrics.contains(#"storerelay_last_received_timestamp_seconds{app="com.acme.journal",environment="sandbox"}"#), "\(metrics)")
    }

    /// A threshold above any disk's free space: `disk.low` at the first check, once, with
    /// the figures; rendered as `{"text": ...}` for a chat webhook.
    @Test func diskLowInSlackFormat() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("chat", sink.url("/ok"), options: "format slack"))
            disk-low 1000000GiB
            operational-events -> chat
            """)
        #expect(sink.waitFor { $0.count >= 1 })
        Thread.sleep(forTimeInterval: 0.6)
        let requests = sink.requests(path: "/ok")
        #expect(requests.count == 1, "told once per crossing: \(requests)")
        let body = try JSONValue.parse(try #require(requests.first?["body"]?.stringValue))
        #expect(body.objectValue?.keys == ["text"])
        let text = try #require(body["text"]?.stringValue)
        #expect(text.hasPrefix("StoreRelay: disk.low path="), "\(text)")
        #expect(text.contains("thresholdBytes=1073741824000000"), "\(text)")
        #expect(requests.first?["signatureValid"] == true)
        #expect(requests.first?["headers"]?["storerelay-type"]?.stringValue == "disk.low")
        let metrics = try AdminGateway(gateway).metrics
        #expect(metrics.contains("storerelay_data_free_bytes "), "\(metrics)")
    }

    /// A reload can turn the events off, and point them at another destination, which then
    /// hears of a condition still standing (the disk is still low).
    @Test func aReloadMovesThemToAnotherDestination() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        func config(_ target: String?) -> String {
            Gateway.bareConfig("""
                trust-root ./test-root.pem
                \(webhookDestination("first", sink.url("/ok?first")))
                \(webhookDestination("second", sink.url("/ok?second")))
                disk-low 1000000GiB
                \(target.map { "operational-events -> \($0)" } ?? "")
                """)
        }
        let directory = try Gateway.trustingDirectory("storerelay-ops-reload")
        let gateway = try Gateway(config: config("first"), directory: directory, hooks: Self.hooks())
        #expect(sink.waitFor { _ in events(sink, "/ok?first").count == 1 })
        for target in [nil, "second"] {
            try config(target).write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
            gateway.process.send(SIGHUP)
            #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        }
        #expect(sink.waitFor { _ in events(sink, "/ok?second").count == 1 })
        #expect(events(sink, "/ok?second").first?["type"]?.stringValue == "disk.low")
        #expect(events(sink, "/ok?first").count == 1)
    }

    /// `format slack` on a destination that routes App Store events: one readable line each,
    /// still signed, with the subscription to look up.
    @Test func appStoreEventsInSlackFormat() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("chat", sink.url("/ok"), options: "format slack"))
            route * * * -> chat
            """)
        let uuid = UUID().uuidString.lowercased()
        let body = try signer.body(uuid: uuid, type: "SUBSCRIBED", subtype: "INITIAL_BUY", originalTransactionId: "2000000000000042")
        #expect(try gateway.post(json: body).status == 200)
        #expect(sink.waitFor { $0.count == 1 })
        let request = try #require(sink.requests(path: "/ok").first)
        #expect(request["signatureValid"] == true)
        let text = try JSONValue.parse(try #require(request["body"]?.stringValue))["text"]?.stringValue
        #expect(text == "StoreRelay: SUBSCRIBED (INITIAL_BUY) com.acme.journal sandbox, originalTransactionId 2000000000000042, id \(uuid)")
    }

    /// The operational-events destination itself failing: its own breaker and its own dead
    /// letters are not reported to it, and every event it is sent is tried within its
    /// budget and then dropped, so the traffic to it stops.
    @Test func aFailingOperationalDestinationDoesNotReportAboutItself() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("ops", sink.url("/flaky/1000"), options: "max-attempts 6"))
            \(webhookDestination("strict", sink.url("/bad")))
            route * * * -> ops, strict
            operational-events -> ops
            """)
        try post(gateway)
        // The event to ops: six attempts, then a dead letter; to strict: a dead letter.
        #expect(gateway.waitForDeadLetterCount { $0 == 2 })
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "operational event about its own destination not sent" } != nil)
        #expect(gateway.process.waitForLog(timeout: 30) { $0["message"]?.stringValue == "operational event dropped" } != nil)
        let settled = sink.requests(path: "/flaky/1000").count
        Thread.sleep(forTimeInterval: 2)
        let requests = sink.requests(path: "/flaky/1000")
        #expect(requests.count == settled, "traffic to the failing destination went on")
        let types = requests.compactMap { $0["headers"]?["storerelay-type"]?.stringValue }
        // Only strict's dead letter is told (tried up to six times); nothing about ops itself.
        let operational = requests.filter { $0["headers"]?["webhook-id"]?.stringValue?.hasPrefix("op_") == true }
        #expect(Set(operational.compactMap { $0["headers"]?["storerelay-type"]?.stringValue }) == ["dead_letter.created"], "\(types)")
        #expect(operational.count <= 6)
        for request in operational {
            let body = try JSONValue.parse(request["body"]?.stringValue ?? "")
            #expect(body["destination"]?.stringValue == "strict")
        }
        let metrics = try AdminGateway(gateway).metrics
        #expect(metrics.contains(#"storerelay_operational_events_total{outcome="dropped"} 1"#), "\(metrics)")
    }
}
