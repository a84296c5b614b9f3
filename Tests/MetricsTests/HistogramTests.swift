import Testing
@testable import StoreRelayCore

/// Bucket arithmetic: `le` is "less than or equal", buckets are cumulative, +Inf counts all.
@Suite struct HistogramTests {
    @Test func boundaryValuesBelongToTheirOwnBucket() {
        let histogram = MetricsRegistry().histogram("h", help: "H.", buckets: [1, 2, 5])
        #expect(histogram.bucketIndex(for: -10) == 0)
        #expect(histogram.bucketIndex(for: 1) == 0)
        #expect(histogram.bucketIndex(for: 1.000_000_1) == 1)
        #expect(histogram.bucketIndex(for: 2) == 1)
        #expect(histogram.bucketIndex(for: 5) == 2)
        #expect(histogram.bucketIndex(for: 5.000_001) == 3)
        #expect(histogram.bucketIndex(for: .infinity) == 3)
        #expect(histogram.bucketIndex(for: .nan) == 3)
    }

    @Test func cumulativeCountsSumAndCount() {
        let histogram = MetricsRegistry().histogram("h", help: "H.", labels: ["k"], buckets: [0.5, 1, 2])
        for value in [0.1, 0.5, 0.7, 1, 1.5, 2, 100] { histogram.observe(value, ["x"]) }
        let buckets = histogram.cumulativeBucketCounts(["x"])
        #expect(buckets.map(\.upperBound) == [0.5, 1, 2, .infinity])
        #expect(buckets.map(\.count) == [2, 4, 6, 7])
        #expect(histogram.count(["x"]) == 7)
        #expect(histogram.sum(["x"]) == 0.1 + 0.5 + 0.7 + 1 + 1.5 + 2 + 100)
        #expect(histogram.count(["never"]) == 0)
        #expect(histogram.cumulativeBucketCounts(["never"]).map(\.count) == [0, 0, 0, 0])
    }

    @Test func everyLatencyBucketBoundaryLandsInItsBucket() {
        let registry = MetricsRegistry()
        let buckets = MetricBuckets.latencySeconds
        let histogram = registry.histogram("latency_seconds", help: "L.", buckets: buckets)
        for bound in buckets { histogram.observe(bound) }
        #expect(histogram.cumulativeBucketCounts().map(\.count) == (1...buckets.count).map(UInt64.init) + [UInt64(buckets.count)])
        let text = registry.render()
        #expect(text.contains("latency_seconds_bucket{le=\"0.0005\"} 1\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"10\"} 14\n"))
        #expect(text.contains("latency_seconds_bucket{le=\"+Inf\"} 14\n"))
        #expect(text.contains("latency_seconds_count 14\n"))
    }

    @Test func nanCountsInInfAndPoisonsTheSum() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("odd", help: "O.", buckets: [1])
        histogram.observe(.nan)
        histogram.observe(0.5)
        #expect(histogram.cumulativeBucketCounts().map(\.count) == [1, 2])
        #expect(registry.render().contains("odd_sum NaN\n"))
    }

    @Test func bucketHelpers() {
        #expect(MetricBuckets.exponential(start: 1, factor: 2, count: 5) == [1, 2, 4, 8, 16])
        #expect(MetricBuckets.linear(start: 0, width: 5, count: 4) == [0, 5, 10, 15])
    }

    @Test func onlyTheInfBucketWhenNoBounds() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("bare", help: "B.", buckets: [])
        histogram.observe(3)
        #expect(registry.render().hasSuffix("bare_bucket{le=\"+Inf\"} 1\nbare_sum 3\nbare_count 1\n"))
    }
}
