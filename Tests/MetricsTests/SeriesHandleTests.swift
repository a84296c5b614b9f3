import Testing
@testable import StoreRelayCore

/// Bound series handles: pre-declared series show as zero, and updates land in the family.
@Suite struct SeriesHandleTests {
    @Test func handlesShowFromCreationAndShareTheFamilysSeries() {
        let registry = MetricsRegistry()
        let deliveries = registry.counter("deliveries_total", help: "D.", labels: ["destination", "outcome"])
        let queued = registry.gauge("queued", help: "Q.", labels: ["destination"])
        let latency = registry.histogram("delivery_seconds", help: "L.", labels: ["destination"], buckets: [1])
        let ok = deliveries.series(["billing", "ok"])
        let depth = queued.series(["billing"])
        let timing = latency.series(["billing"])
        #expect(registry.render() == """
            # HELP deliveries_total D.
            # TYPE deliveries_total counter
            deliveries_total{destination="billing",outcome="ok"} 0
            # HELP queued Q.
            # TYPE queued gauge
            queued{destination="billing"} 0
            # HELP delivery_seconds L.
            # TYPE delivery_seconds histogram
            delivery_seconds_bucket{destination="billing",le="1"} 0
            delivery_seconds_bucket{destination="billing",le="+Inf"} 0
            delivery_seconds_sum{destination="billing"} 0
            delivery_seconds_count{destination="billing"} 0

            """)
        ok.increment()
        ok.increment(by: 2)
        deliveries.increment(["billing", "ok"])
        depth.set(5)
        depth.add(-2)
        timing.observe(0.5)
        timing.observe(2)
        #expect(ok.value == 4)
        #expect(deliveries.value(["billing", "ok"]) == 4)
        #expect(depth.value == 3)
        #expect(queued.value(["billing"]) == 3)
        #expect(latency.cumulativeBucketCounts(["billing"]).map(\.count) == [1, 2])
        #expect(latency.sum(["billing"]) == 2.5)
    }

    @Test func creatingAHandleKeepsExistingValues() {
        let registry = MetricsRegistry()
        let counter = registry.counter("c_total", help: "C.", labels: ["k"])
        counter.increment(["v"], by: 7)
        #expect(counter.series(["v"]).value == 7)
        let histogram = registry.histogram("h", help: "H.", labels: ["k"], buckets: [1])
        histogram.observe(0.5, ["v"])
        _ = histogram.series(["v"])
        #expect(histogram.count(["v"]) == 1)
    }
}
