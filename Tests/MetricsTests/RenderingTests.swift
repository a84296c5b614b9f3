import Testing
@testable import StoreRelayCore

/// Exact text of each family type, as Prometheus' text format version 0.0.4 spells it.
@Suite struct RenderingTests {
    @Test func emptyFamiliesStillHaveHelpAndType() {
        let registry = MetricsRegistry()
        _ = registry.counter("relay_received_total", help: "Received.", labels: ["environment"])
        _ = registry.gauge("relay_in_flight", help: "In flight.", labels: ["destination"])
        _ = registry.histogram("relay_latency_seconds", help: "Latency.", labels: ["route"], buckets: [1])
        #expect(registry.render() == """
            # HELP relay_received_total Received.
            # TYPE relay_received_total counter
            # HELP relay_in_flight In flight.
            # TYPE relay_in_flight gauge
            # HELP relay_latency_seconds Latency.
            # TYPE relay_latency_seconds histogram

            """)
    }

    @Test func familiesWithoutLabelsAreZeroFromRegistration() {
        let registry = MetricsRegistry()
        _ = registry.counter("a_total", help: "A.")
        _ = registry.gauge("b", help: "B.")
        _ = registry.histogram("c", help: "C.", buckets: [0.5])
        #expect(registry.render() == """
            # HELP a_total A.
            # TYPE a_total counter
            a_total 0
            # HELP b B.
            # TYPE b gauge
            b 0
            # HELP c C.
            # TYPE c histogram
            c_bucket{le="0.5"} 0
            c_bucket{le="+Inf"} 0
            c_sum 0
            c_count 0

            """)
    }

    @Test func counterSamplesAreSortedByLabelValues() {
        let registry = MetricsRegistry()
        let counter = registry.counter("relay_received_total", help: "Notifications received.",
                                       labels: ["environment", "outcome"])
        counter.increment(["sandbox", "accepted"])
        counter.increment(["production", "rejected"], by: 2)
        counter.increment(["production", "accepted"], by: 0.5)
        counter.increment(["production", "accepted"], by: 0.25)
        #expect(counter.value(["production", "accepted"]) == 0.75)
        #expect(counter.value(["xcode", "accepted"]) == 0)
        #expect(registry.render() == """
            # HELP relay_received_total Notifications received.
            # TYPE relay_received_total counter
            relay_received_total{environment="production",outcome="accepted"} 0.75
            relay_received_total{environment="production",outcome="rejected"} 2
            relay_received_total{environment="sandbox",outcome="accepted"} 1

            """)
    }

    @Test func gaugeSetAddAndSpecialValues() {
        let registry = MetricsRegistry()
        let gauge = registry.gauge("relay_breaker_open", help: "Breaker state.", labels: ["destination"])
        gauge.set(1, ["b"])
        gauge.add(-3.5, ["a"])
        gauge.add(1, ["a"])
        gauge.set(.infinity, ["inf"])
        gauge.set(-.infinity, ["minus"])
        gauge.set(.nan, ["nan"])
        gauge.set(1_234_567_890_123, ["big"])
        gauge.set(1e300, ["huge"])
        #expect(gauge.value(["a"]) == -2.5)
        #expect(registry.render() == """
            # HELP relay_breaker_open Breaker state.
            # TYPE relay_breaker_open gauge
            relay_breaker_open{destination="a"} -2.5
            relay_breaker_open{destination="b"} 1
            relay_breaker_open{destination="big"} 1234567890123
            relay_breaker_open{destination="huge"} 1e+300
            relay_breaker_open{destination="inf"} +Inf
            relay_breaker_open{destination="minus"} -Inf
            relay_breaker_open{destination="nan"} NaN

            """)
    }

    @Test func sampledGaugeIsComputedAtEveryScrape() {
        let registry = MetricsRegistry()
        let depth = Box(3.0)
        registry.gauge("relay_queue_depth", help: "Queued events.", labels: ["destination"]) {
            [(["zeta"], depth.value), (["alpha"], 7)]
        }
        let first = registry.render()
        depth.value = 4
        #expect(first == """
            # HELP relay_queue_depth Queued events.
            # TYPE relay_queue_depth gauge
            relay_queue_depth{destination="alpha"} 7
            relay_queue_depth{destination="zeta"} 3

            """)
        #expect(registry.render().contains("relay_queue_depth{destination=\"zeta\"} 4\n"))

        // Registering again replaces the closure (the owner was rebuilt).
        registry.gauge("relay_queue_depth", help: "Queued events.", labels: ["destination"]) { [(["new"], 1)] }
        #expect(registry.render().hasSuffix("# TYPE relay_queue_depth gauge\nrelay_queue_depth{destination=\"new\"} 1\n"))
    }

    @Test func histogramRendersCumulativeBucketsSumAndCount() {
        let registry = MetricsRegistry()
        let histogram = registry.histogram("relay_ack_seconds", help: "Acknowledgement latency.",
                                           labels: ["environment"], buckets: [0.005, 0.1, 1, 2.5])
        for value in [0.001, 0.005, 0.05, 0.75, 3] { histogram.observe(value, ["production"]) }
        histogram.observe(1, ["sandbox"])
        #expect(registry.render() == """
            # HELP relay_ack_seconds Acknowledgement latency.
            # TYPE relay_ack_seconds histogram
            relay_ack_seconds_bucket{environment="production",le="0.005"} 2
            relay_ack_seconds_bucket{environment="production",le="0.1"} 3
            relay_ack_seconds_bucket{environment="production",le="1"} 4
            relay_ack_seconds_bucket{environment="production",le="2.5"} 4
            relay_ack_seconds_bucket{environment="production",le="+Inf"} 5
            relay_ack_seconds_sum{environment="production"} 3.806
            relay_ack_seconds_count{environment="production"} 5
            relay_ack_seconds_bucket{environment="sandbox",le="0.005"} 0
            relay_ack_seconds_bucket{environment="sandbox",le="0.1"} 0
            relay_ack_seconds_bucket{environment="sandbox",le="1"} 1
            relay_ack_seconds_bucket{environment="sandbox",le="2.5"} 1
            relay_ack_seconds_bucket{environment="sandbox",le="+Inf"} 1
            relay_ack_seconds_sum{environment="sandbox"} 1
            relay_ack_seconds_count{environment="sandbox"} 1

            """)
    }

    @Test func familiesKeepRegistrationOrderAndReRegistrationReturnsTheSameFamily() {
        let registry = MetricsRegistry()
        let zulu = registry.counter("zulu_total", help: "Z.")
        _ = registry.gauge("alpha", help: "A.")
        let again = registry.counter("zulu_total", help: "Other help is ignored.")
        #expect(zulu === again)
        let histogram = registry.histogram("mike", help: "M.", labels: ["x"], buckets: [1, 2])
        #expect(registry.histogram("mike", help: "M.", labels: ["x"], buckets: [1, 2, .infinity]) === histogram)
        #expect(registry.gauge("alpha", help: "A.") === registry.gauge("alpha", help: "A."))
        again.increment()
        #expect(zulu.value() == 1)
        #expect(registry.familyNames == ["zulu_total", "alpha", "mike"])
        let headers = registry.render().split(separator: "\n").filter { $0.hasPrefix("# TYPE") }
        #expect(headers == ["# TYPE zulu_total counter", "# TYPE alpha gauge", "# TYPE mike histogram"])
    }

    @Test func contentTypeIsTheTextFormat() {
        #expect(MetricsRegistry.contentType == "text/plain; version=0.0.4; charset=utf-8")
    }
}

/// A mutable value a sampled-gauge closure can read; tests only.
final class Box<Value: Sendable>: @unchecked Sendable {
    // Invariant: touched by one thread at a time (the test thread, or under the test's own lock).
    var value: Value
    init(_ value: Value) { self.value = value }
}
