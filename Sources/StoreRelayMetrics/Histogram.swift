import StoreRelaySupport

/// Observations counted into buckets by upper bound, one series per set of label values;
/// exposed as cumulative `_bucket{le="..."}` lines ending with `le="+Inf"`, then `_sum` and
/// `_count`, as Prometheus' `histogram_quantile` expects.
///
/// Thread-safe. An observation finds its bucket by binary search outside the lock, then takes
/// the family's lock for one in-place update; it allocates only for a new set of label values.
public final class Histogram: Sendable, MetricFamily {
    /// Per-bucket (not cumulative) counts; the last slot is the `+Inf` bucket.
    struct Series: Sendable {
        var bucketCounts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0
    }

    let descriptor: MetricDescriptor
    /// Finite, strictly increasing upper bounds, without the implied `+Inf`.
    let upperBounds: [Double]
    /// `le` label values, formatted once: one per bound, then `+Inf`.
    private let boundLabels: [String]
    private let series: Locked<[LabelValues: Series]>

    init(descriptor: MetricDescriptor, buckets: [Double]) {
        var bounds = buckets
        if bounds.last == .infinity { bounds.removeLast() }
        for (index, bound) in bounds.enumerated() {
            precondition(bound.isFinite, "histogram '\(descriptor.name)' has a non-finite bucket bound \(bound)")
            precondition(index == 0 || bounds[index - 1] < bound,
                         "histogram '\(descriptor.name)' buckets must increase strictly: \(buckets)")
        }
        self.descriptor = descriptor
        upperBounds = bounds
        boundLabels = bounds.map(PrometheusFloat.goString) + ["+Inf"]
        series = Locked(descriptor.initialSeries(Series(bucketCounts: Array(repeating: 0, count: bounds.count + 1))))
    }

    /// The family's name; samples are `<name>_bucket`, `<name>_sum` and `<name>_count`.
    public var name: String { descriptor.name }

    /// Records `value` in the series for `labelValues`. A value equal to a bound belongs to that
    /// bound's bucket (`le` means less or equal); NaN counts only in `+Inf` and poisons `_sum`,
    /// as in the Go client.
    public func observe(_ value: Double, _ labelValues: [String] = []) {
        descriptor.checkLabelCount(labelValues)
        let bucket = bucketIndex(for: value)
        let key = LabelValues(labelValues)
        let slots = upperBounds.count + 1
        series.withLock { all in
            // The default is an autoclosure: built only for a new set of label values.
            all[key, default: Series(bucketCounts: Array(repeating: 0, count: slots))].record(value, in: bucket)
        }
    }

    /// The slot of the first bound `>= value`, or the `+Inf` slot.
    func bucketIndex(for value: Double) -> Int {
        var low = 0, high = upperBounds.count
        while low < high {
            let middle = (low + high) / 2
            if value <= upperBounds[middle] { high = middle } else { low = middle + 1 }
        }
        return low
    }

    /// Number of observations in one series, 0 when none. For tests and status pages.
    public func count(_ labelValues: [String] = []) -> UInt64 {
        snapshot(labelValues)?.count ?? 0
    }

    /// Sum of the observations in one series, 0 when none.
    public func sum(_ labelValues: [String] = []) -> Double {
        snapshot(labelValues)?.sum ?? 0
    }

    /// Cumulative counts per bucket as exposed (`le` ascending, the last one `+Inf`).
    public func cumulativeBucketCounts(_ labelValues: [String] = []) -> [(upperBound: Double, count: UInt64)] {
        let counts = snapshot(labelValues)?.bucketCounts ?? Array(repeating: 0, count: upperBounds.count + 1)
        var running: UInt64 = 0
        return zip(upperBounds + [.infinity], counts).map { bound, count in
            running += count
            return (bound, running)
        }
    }

    private func snapshot(_ labelValues: [String]) -> Series? {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        return series.withLock { $0[key] }
    }

    func write(to writer: inout ExpositionWriter) {
        let snapshot = series.current
        writer.writeHeader(descriptor)
        let name = descriptor.name, labelNames = descriptor.labelNames
        for (key, value) in sortedSeries(snapshot) {
            var cumulative: UInt64 = 0
            for (count, bound) in zip(value.bucketCounts, boundLabels) {
                cumulative += count
                writer.writeSample(name: name, suffix: "_bucket", labelNames: labelNames, labelValues: key.values,
                                   extraLabel: ("le", bound), value: Double(cumulative))
            }
            writer.writeSample(name: name, suffix: "_sum", labelNames: labelNames, labelValues: key.values, value: value.sum)
            writer.writeSample(name: name, suffix: "_count", labelNames: labelNames, labelValues: key.values,
                               value: Double(value.count))
        }
    }
}

extension Histogram.Series {
    mutating func record(_ value: Double, in bucket: Int) {
        bucketCounts[bucket] += 1
        sum += value
        count += 1
    }
}
