import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `docker/prometheus/alerts.yml` and `docker/grafana/storerelay.json` use only metrics the
/// gateway exports (issue 28 point 4): every `storerelay_*` name in their expressions must
/// be a family in a running gateway's `/metrics`, and promtool, where installed, must accept
/// the rules and the dashboard's queries.
@Suite("Alert rules and dashboard", .serialized)
struct MonitoringAssetsTests {
    static let rulesFile = TestPaths.packageRoot.appendingPathComponent("docker/prometheus/alerts.yml")
    static let dashboardFile = TestPaths.packageRoot.appendingPathComponent("docker/grafana/storerelay.json")
    static var promtool: String? {
        ["/usr/bin/promtool", "/usr/local/bin/promtool"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// Each rule's `expr:` (one line each: the file keeps them so).
    static func ruleExpressions() throws -> [String] {
        try String(contentsOf: rulesFile, encoding: .utf8).split(separator: "\n").compactMap { line in
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            guard trimmed.hasPrefix("expr:") else { return nil }
            return String(trimmed.dropFirst("expr:".count)).trimmingCharacters(in: .whitespaces)
        }
    }

    /// Every panel target's `expr`.
    static func dashboardExpressions() throws -> [String] {
        let dashboard = try JSONValue.parse(Array(try Data(contentsOf: dashboardFile)))
        return (dashboard["panels"]?.arrayValue ?? []).flatMap { panel in
            (panel["targets"]?.arrayValue ?? []).compactMap { $0["expr"]?.stringValue }
        }
    }

    /// The `storerelay_*` names an expression reads.
    static func metricNames(in expression: String) -> Set<String> {
        let pattern = try! NSRegularExpression(pattern: "storerelay_[a-z0-9_]+")
        let range = NSRange(expression.startIndex..., in: expression)
        return Set(pattern.matches(in: expression, range: range).compactMap { Range($0.range, in: expression).map { String(expression[$0]) } })
    }

    /// The families of a Prometheus text exposition, by their `# TYPE` lines, with the series
    /// names a histogram adds.
    static func families(_ exposition: String) -> Set<String> {
        var names = Set<String>()
        for line in exposition.split(separator: "\n") where line.hasPrefix("# TYPE ") {
            let parts = line.split(separator: " ")
            guard parts.count == 4 else { continue }
            let name = String(parts[2])
            names.insert(name)
            if parts[3] == "histogram" { names.formUnion([name + "_bucket", name + "_count", name + "_sum"]) }
        }
        return names
    }

    static func usedNames() throws -> Set<String> {
        try (ruleExpressions() + dashboardExpressions()).reduce(into: Set<String>()) { $0.formUnion(metricNames(in: $1)) }
    }

    /// Each `label="value"` matcher on a `storerelay_*` metric in `expression`.
    static func matchers(in expression: String) -> [(metric: String, label: String, value: String)] {
        let selector = try! NSRegularExpression(pattern: #"(storerelay_[a-z0-9_]+)\{([^}]*)\}"#)
        let equality = try! NSRegularExpression(pattern: #"([a-z_]+)="([^"]*)""#)
        var found: [(String, String, String)] = []
        for match in selector.matches(in: expression, range: NSRange(expression.startIndex..., in: expression)) {
            guard let name = Range(match.range(at: 1), in: expression), let body = Range(match.range(at: 2), in: expression) else { continue }
            let inside = String(expression[body])
            for pair in equality.matches(in: inside, range: NSRange(inside.startIndex..., in: inside)) {
                guard let label = Range(pair.range(at: 1), in: inside), let value = Range(pair.range(at: 2), in: inside) else { continue }
                found.append((String(expression[name]), String(inside[label]), String(inside[value])))
            }
        }
        return found
    }

    /// A single-node gateway with a destination, an accepted notification, a delivery and
    /// an app reconciled with (the fake) Apple: its `/metrics` text.
    private func singleNodeExposition() throws -> String {
        let sink = try WebhookSink(secret: testSigningSecret)
        let fake = try FakeAppStoreAPI(bundleId: "com.acme.journal")
        try fake.control(["history": [], "pageSize": 20])
        let gateway = try Gateway(config: Gateway.trustingConfig("""
            \(webhookDestination("hook", sink.url("/ok")))
            route * * * -> hook
            \(fake.apiURLLine)
            app com.acme.journal {
                apple-id 1234567890
                \(fake.apiKeyLine)
                reconcile every 1h overlap 2h
            }
            """), directory: try Gateway.trustingDirectory("storerelay-monitoring"))
        #expect(try gateway.post(json: try testSigner.body()).status == 200)
        #expect(sink.waitFor { $0.count == 1 })
        let admin = try AdminGateway(gateway)
        // The disk watch's first figure comes from its first check, at start.
        #expect(pollUntil(timeout: 10) { ((try? admin.metrics) ?? "").contains("storerelay_data_free_bytes ") })
        return try admin.metrics
    }

    private func singleNodeFamilies() throws -> Set<String> { Self.families(try singleNodeExposition()) }

    /// A matcher on a label value the gateway never exports selects nothing, silently: every
    /// `label="value"` the rules and the dashboard use must be a series of a running gateway
    /// (the configuration's series are there from the start, at 0).
    @Test func everyLabelValueMatchedIsExported() throws {
        let exposition = try singleNodeExposition()
        let samples = exposition.split(separator: "\n").filter { !$0.hasPrefix("#") }
        let used = try (Self.ruleExpressions() + Self.dashboardExpressions()).flatMap(Self.matchers)
        #expect(!used.isEmpty)
        for (metric, label, value) in used where !metric.hasPrefix("storerelay_cluster_") {
            #expect(samples.contains { $0.hasPrefix(metric + "{") && $0.contains("\(label)=\"\(value)\"") },
                    "\(metric){\(label)=\"\(value)\"} is never exported")
        }
    }

    @Test func bothFilesHaveExpressions() throws {
        #expect(try Self.ruleExpressions().count >= 15)
        #expect(try Self.dashboardExpressions().count >= 20)
    }

    /// Every name is exported by a single-node gateway, except cluster mode's own, which the
    /// next test checks against a cluster-mode gateway.
    @Test func everyNameIsExportedInSingleNodeMode() throws {
        let exported = try singleNodeFamilies()
        let missing = try Self.usedNames().subtracting(exported)
        #expect(missing.allSatisfy { $0.hasPrefix("storerelay_cluster_") }, "not exported: \(missing.sorted())")
        for name in ["storerelay_build_info", "storerelay_oldest_pending_seconds", "storerelay_last_received_timestamp_seconds",
                     "storerelay_data_free_bytes", "storerelay_operational_events_total"] {
            #expect(exported.contains(name), "\(name)")
        }
    }

    /// Single-node mode reports the age of the oldest undelivered event per destination: an
    /// event waiting an hour for its retry grows older; a delivered one leaves 0.
    @Test func oldestPendingAgeInSingleNodeMode() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let unreachable = "http://127.0.0.1:\(freeLoopbackPort())/hook"
        let gateway = try Gateway(config: Gateway.trustingConfig("""
            \(webhookDestination("down", unreachable, options: "backoff 1h 1h"))
            \(webhookDestination("up", sink.url("/ok")))
            route * * * -> down, up
            """), directory: try Gateway.trustingDirectory("storerelay-oldest"))
        #expect(try gateway.post(json: try testSigner.body()).status == 200)
        #expect(sink.waitFor { $0.count == 1 })
        let admin = try AdminGateway(gateway)
        func age(_ destination: String) -> Double? {
            let metrics = (try? admin.metrics) ?? ""
            let prefix = "storerelay_oldest_pending_seconds{destination=\"\(destination)\"} "
            return metrics.split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
        }
        #expect(pollUntil(timeout: 10) { (age("down") ?? 0) >= 1.0 }, "\(String(describing: age("down")))")
        #expect(age("up") == 0)
    }

    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
    func everyNameIsExportedInOneModeOrTheOther() throws {
        let server = try RedisServerProcess()
        let gateway = try Gateway(config: Gateway.trustingConfig("""
            cluster redis://127.0.0.1:\(server.port) {
                instance-id a
            }
            """), directory: try Gateway.trustingDirectory("storerelay-monitoring-cluster"))
        #expect(try gateway.post(json: try testSigner.body()).status == 200)
        let admin = try AdminGateway(gateway)
        let cluster = Self.families(try admin.metrics)
        let missing = try Self.usedNames().subtracting(cluster).subtracting(try singleNodeFamilies())
        #expect(missing.isEmpty, "not exported in either mode: \(missing.sorted())")
    }

    /// promtool parses the rules, and the dashboard's queries written as recording rules.
    @Test(.enabled(if: MonitoringAssetsTests.promtool != nil, "promtool is not installed (apt-get install prometheus)"))
    func promtoolAcceptsTheRulesAndTheDashboardQueries() throws {
        let promtool = try #require(Self.promtool)
        let rules = try CommandRunner.run(promtool, ["check", "rules", Self.rulesFile.path])
        #expect(rules.status == 0, "\(rules.stdout) \(rules.stderr)")
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-promtool")
        let recording = "groups:\n  - name: dashboard\n    rules:\n" + (try Self.dashboardExpressions()).enumerated().map { index, expr in
            "      - record: storerelay_dashboard:panel_\(index)\n        expr: '\(expr.replacingOccurrences(of: "'", with: "''"))'\n"
        }.joined()
        let file = directory.appendingPathComponent("dashboard-rules.yml")
        try recording.write(to: file, atomically: true, encoding: .utf8)
        let dashboard = try CommandRunner.run(promtool, ["check", "rules", file.path])
        #expect(dashboard.status == 0, "\(dashboard.stdout) \(dashboard.stderr)")
    }
}
