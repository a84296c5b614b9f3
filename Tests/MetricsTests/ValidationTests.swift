import Testing
@testable import StoreRelayCore

/// Names are checked at registration; misuse is a programming error that stops the process.
@Suite struct ValidationTests {
    @Test(arguments: ["a", "_", ":", "relay:acks_total", "A_b9", "storerelay_received_total"])
    func validMetricNames(name: String) {
        #expect(MetricDescriptor.isValidMetricName(name))
    }

    @Test(arguments: ["", "9lives", "has-dash", "has space", "dot.ted", "é", "a\n", "{a}"])
    func invalidMetricNames(name: String) {
        #expect(!MetricDescriptor.isValidMetricName(name))
    }

    @Test(arguments: ["a", "_a", "destination", "Outcome_2"])
    func validLabelNames(name: String) {
        #expect(MetricDescriptor.isValidLabelName(name))
    }

    @Test(arguments: ["", "__name__", "__x", "a:b", "1a", "dest-ination", "ü"])
    func invalidLabelNames(name: String) {
        #expect(!MetricDescriptor.isValidLabelName(name))
    }

    @Test func claimedNamesCoverEverySampleName() {
        let counter = MetricDescriptor(name: "x_total", help: "", kind: .counter, labelNames: [])
        #expect(counter.claimedNames == ["x_total", "x"])
        let histogram = MetricDescriptor(name: "h", help: "", kind: .histogram, labelNames: [])
        #expect(histogram.claimedNames == ["h", "h_bucket", "h_sum", "h_count"])
    }

    // Each exit test runs its body in a child copy of the test process and expects it to trap.

    @Test func counterWithoutTotalSuffixTraps() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().counter("requests", help: "R.") }
    }

    @Test func invalidMetricNameTraps() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("bad-name", help: "B.") }
    }

    @Test func reservedLabelNameTraps() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().gauge("g", help: "G.", labels: ["__x"]) }
    }

    @Test func labelCountMismatchTraps() async {
        await #expect(processExitsWith: .failure) {
            MetricsRegistry().counter("c_total", help: "C.", labels: ["a", "b"]).increment(["only one"])
        }
    }

    @Test func sameNameDifferentTypeTraps() async {
        await #expect(processExitsWith: .failure) {
            let registry = MetricsRegistry()
            _ = registry.gauge("x", help: "X.")
            _ = registry.histogram("x", help: "X.", buckets: [1])
        }
    }

    @Test func sameNameDifferentLabelsTraps() async {
        await #expect(processExitsWith: .failure) {
            let registry = MetricsRegistry()
            _ = registry.gauge("x", help: "X.", labels: ["a"])
            _ = registry.gauge("x", help: "X.", labels: ["b"])
        }
    }

    @Test func sampleNameCollisionTraps() async {
        await #expect(processExitsWith: .failure) {
            let registry = MetricsRegistry()
            _ = registry.histogram("h", help: "H.", buckets: [1])
            _ = registry.gauge("h_count", help: "Clashes with the histogram's _count.")
        }
    }

    @Test func unsortedBucketsTrap() async {
        await #expect(processExitsWith: .failure) { _ = MetricsRegistry().histogram("h", help: "H.", buckets: [1, 1]) }
    }

    @Test func negativeCounterIncrementTraps() async {
        await #expect(processExitsWith: .failure) { MetricsRegistry().counter("c_total", help: "C.").increment(by: -1) }
    }

    @Test func histogramLeLabelTraps() async {
        await #expect(processExitsWith: .failure) {
            _ = MetricsRegistry().histogram("h", help: "H.", labels: ["le"], buckets: [1])
        }
    }
}
