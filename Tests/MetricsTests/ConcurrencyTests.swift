import Dispatch
import Testing
@testable import StoreRelayCore

/// Many threads updating the same families while others scrape: totals must come out exact.
@Suite struct ConcurrencyTests {
    static let threads = 8
    static let iterations = 20_000

    @Test func concurrentUpdatesAreExact() {
        let registry = MetricsRegistry()
        let counter = registry.counter("hits_total", help: "Hits.", labels: ["destination", "outcome"])
        let plain = registry.counter("plain_total", help: "Plain.")
        let gauge = registry.gauge("in_flight", help: "In flight.", labels: ["destination"])
        let histogram = registry.histogram("latency_seconds", help: "Latency.", labels: ["destination"],
                                           buckets: MetricBuckets.latencySeconds)
        let destinations = ["alpha", "beta", "gamma"]
        let bound = destinations.map { counter.series([$0, "bound"]) }
        let scrapes = Box(0)

        DispatchQueue.concurrentPerform(iterations: Self.threads + 1) { thread in
            if thread == Self.threads {
                // A scraper running alongside the writers; it must never see a torn family.
                var count = 0
                for _ in 0..<50 {
                    let text = registry.render()
                    if text.contains("# TYPE latency_seconds histogram") { count += 1 }
                }
                scrapes.value = count
                return
            }
            for index in 0..<Self.iterations {
                let destination = destinations[(index + thread) % destinations.count]
                counter.increment([destination, index % 2 == 0 ? "ok" : "failed"])
                plain.increment(by: 0.5)
                bound[index % bound.count].increment()
                gauge.add(1, [destination])
                gauge.add(-1, [destination])
                gauge.add(1, [destination])
                histogram.observe(Double(index % 100) / 1000, [destination])
            }
        }

        let total = Double(Self.threads * Self.iterations)
        var counted = 0.0
        for destination in destinations {
            counted += counter.value([destination, "ok"]) + counter.value([destination, "failed"])
        }
        #expect(counted == total)
        #expect(bound.map(\.value).reduce(0, +) == total)
        #expect(plain.value() == total / 2)
        #expect(destinations.map { gauge.value([$0]) }.reduce(0, +) == total)
        #expect(destinations.map { histogram.count([$0]) }.reduce(0, +) == UInt64(total))
        #expect(destinations.map { histogram.cumulativeBucketCounts([$0]).last!.count }.reduce(0, +) == UInt64(total))
        #expect(scrapes.value == 50)
        #expect(registry.render().contains("plain_total \(Int(total / 2))\n"))
    }

    @Test func concurrentRegistrationYieldsOneFamily() {
        let registry = MetricsRegistry()
        let seen = Box<[ObjectIdentifier]>([])
        let lock = DispatchQueue(label: "seen")
        DispatchQueue.concurrentPerform(iterations: 16) { _ in
            let counter = registry.counter("shared_total", help: "Shared.", labels: ["k"])
            counter.increment(["v"])
            lock.sync { seen.value.append(ObjectIdentifier(counter)) }
        }
        #expect(Set(seen.value).count == 1)
        #expect(registry.familyNames == ["shared_total"])
        #expect(registry.counter("shared_total", help: "Shared.", labels: ["k"]).value(["v"]) == 16)
    }
}
