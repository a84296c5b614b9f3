import Foundation
import StoreRelayTestSupport
import Testing
@testable import StoreRelayCore

/// An independent check: the official Prometheus Python client parses our output and must
/// get back exactly the names, types, help, label values and sample values we put in.
@Suite struct PythonParserTests {
    static let unavailable = "python3 with prometheus_client is not installed (pip install prometheus_client): parser check skipped"

    static let parserAvailable: Bool =
        (try? CommandRunner.run("python3", ["-c", "import prometheus_client"]).status) == 0

    /// Parses stdin and prints every family as JSON; strings travel as UTF-8 hex so that no
    /// JSON or Unicode normalisation step can hide a difference.
    static let script = """
        import json, sys
        from prometheus_client.parser import text_string_to_metric_families
        text = sys.stdin.buffer.read().decode("utf-8")
        hexed = lambda s: s.encode("utf-8").hex()
        print(json.dumps([
            {"name": f.name, "type": f.type, "help": hexed(f.documentation),
             "samples": [{"name": s.name, "labels": {k: hexed(v) for k, v in s.labels.items()},
                          "value": repr(float(s.value))} for s in f.samples]}
            for f in text_string_to_metric_families(text)]))
        """

    struct ParsedFamily: Decodable {
        var name: String
        var type: String
        var help: String
        var samples: [ParsedSample]
    }

    struct ParsedSample: Decodable, Equatable {
        var name: String
        var labels: [String: String]
        var value: String
    }

    /// Label values from the outside world at their most hostile.
    static let hostile = [
        #"a"b"#, #"c:\path\"#, "line1\nline2", #"\n is two characters"#, "</script><script>alert(\"x\")</script>",
        "tab\tcr\r", "\u{e9}", "e\u{301}", "🦄 שלום العربية 中文", "", " spaced ", #"{a="b",c}"#, "# HELP x y",
        #"\""#, "\u{2028}\u{85}", #"""""#, #"trailing\"#, "=,}",
    ]

    @Test(.enabled(if: parserAvailable, Comment(rawValue: unavailable)))
    func officialParserRoundTripsEverything() throws {
        let registry = MetricsRegistry()
        let received = registry.counter("storerelay_notifications_received_total",
                                        help: "Notifications received, by \"environment\" \\ outcome.\nSecond line.",
                                        labels: ["destination", "outcome"])
        let plain = registry.counter("storerelay_restarts_total", help: "Restarts.")
        let gauge = registry.gauge("storerelay_breaker_state", help: "Breaker.", labels: ["destination"])
        let latency = registry.histogram("storerelay_ack_seconds", help: "Ack latency.", labels: ["environment"],
                                         buckets: MetricBuckets.latencySeconds + [1e6])
        registry.gauge("storerelay_queue_depth", help: "Depth.", labels: ["destination"]) {
            Self.hostile.enumerated().map { ([$1], Double($0)) }
        }
        _ = registry.gauge("storerelay_unused", help: "Never set.", labels: ["x"])

        var expected: [String: [ParsedSample]] = [:]
        func expect(_ family: String, _ name: String, _ labels: [String: String], _ value: Double) {
            expected[family, default: []].append(ParsedSample(
                name: name, labels: labels.mapValues(Self.hex), value: Self.python(value)))
        }
        for (index, value) in Self.hostile.enumerated() {
            received.increment([value, "accepted"], by: Double(index + 1))
            expect("storerelay_notifications_received", "storerelay_notifications_received_total",
                   ["destination": value, "outcome": "accepted"], Double(index + 1))
            gauge.set(Double(index) - 0.5, [value])
            expect("storerelay_breaker_state", "storerelay_breaker_state", ["destination": value], Double(index) - 0.5)
            expect("storerelay_queue_depth", "storerelay_queue_depth", ["destination": value], Double(index))
        }
        plain.increment(by: 3)
        expect("storerelay_restarts", "storerelay_restarts_total", [:], 3)
        for (value, special) in [("nan", Double.nan), ("inf", .infinity), ("-inf", -.infinity), ("big", 1e300)] {
            gauge.set(special, [value])
            expect("storerelay_breaker_state", "storerelay_breaker_state", ["destination": value], special)
        }
        let observations = [0.0001, 0.0005, 0.003, 0.25, 7, 20, 5e5]
        for value in observations { latency.observe(value, ["production"]) }
        let bounds = MetricBuckets.latencySeconds + [1e6, .infinity]
        for bound in bounds {
            let le = bound == .infinity ? "+Inf" : PrometheusFloat.goString(bound)
            expect("storerelay_ack_seconds", "storerelay_ack_seconds_bucket", ["environment": "production", "le": le],
                   Double(observations.filter { $0 <= bound }.count))
        }
        expect("storerelay_ack_seconds", "storerelay_ack_seconds_sum", ["environment": "production"],
               latency.sum(["production"]))
        expect("storerelay_ack_seconds", "storerelay_ack_seconds_count", ["environment": "production"],
               Double(observations.count))

        let text = registry.render()
        let result = try CommandRunner.run("python3", ["-c", Self.script], stdin: Array(text.utf8))
        try #require(result.status == 0, "parser failed: \(result.stderr)\n--- input ---\n\(text)")
        let families = try JSONDecoder().decode([ParsedFamily].self, from: Data(result.stdout.utf8))

        // The parser names a counter family without `_total`, as OpenMetrics does.
        #expect(families.map(\.name) == [
            "storerelay_notifications_received", "storerelay_restarts", "storerelay_breaker_state",
            "storerelay_ack_seconds", "storerelay_queue_depth", "storerelay_unused",
        ])
        #expect(families.map(\.type) == ["counter", "counter", "gauge", "histogram", "gauge", "gauge"])
        #expect(families.first?.help == Self.hex("Notifications received, by \"environment\" \\ outcome.\nSecond line."))
        for family in families {
            let parsed = family.samples.sorted(by: Self.order)
            let wanted = (expected[family.name] ?? []).sorted(by: Self.order)
            #expect(parsed == wanted, "family \(family.name)")
        }
        // The le labels are written exactly as Prometheus writes them.
        let les = families[3].samples.compactMap { $0.labels["le"].map(Self.unhex) }
        #expect(les == ["0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5",
                        "1", "2.5", "5", "10", "1e+06", "+Inf"])
    }

    static func hex(_ string: String) -> String {
        string.utf8.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    static func unhex(_ hex: String) -> String {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Python's `repr(float(v))` for the values used here.
    static func python(_ value: Double) -> String {
        if value.isNaN { return "nan" }
        if value.isInfinite { return value > 0 ? "inf" : "-inf" }
        if value == value.rounded(), value.magnitude < 1e16 { return String(Int64(value)) + ".0" }
        return value.description
    }

    static func order(_ lhs: ParsedSample, _ rhs: ParsedSample) -> Bool {
        func key(_ sample: ParsedSample) -> String {
            sample.name + "|" + sample.labels.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ",")
        }
        return key(lhs) < key(rhs)
    }
}
