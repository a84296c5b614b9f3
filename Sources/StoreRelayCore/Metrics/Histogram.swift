
/// Observations counted into buckets by upper bound, one series per set of label values;
/// exposed as cumulative `_bucket{le="..."}` lines ending with `le="+Inf"`, then `_sum` and
/// `_count`, as Prometheus' `histogram_quantile` expects.
///
/// Thread-safe. An observation finds its bucket by binary search outside the lock, then takes
/// the family's lock for one in-place update; it allocates only for a new set of label values.
public final class Histogram: Sendable, MetricFamily {
    /// Per-bucket (not cumulative) counts; the last slot is the `+Inf` bucket.
    struct Buckets: Sendable {
        var bucketCounts: [UInt64]
        var sum: Double = 0
        var count: UInt64 = 0
    }

    let descriptor: MetricDescriptor
    /// Finite, strictly increasing upper bounds, without the implied `+Inf`.
    let upperBounds: [Double]
    /// `le` label values, formatted once: one per bound, then `+Inf`.
    private let boundLabels: [String]
    private let storage: Locked<[LabelValues: Buckets]>

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
        storage = Locked(descriptor.initialSeries(Buckets(bucketCounts: Array(repeating: 0, count: bounds.count + 1))))
    }

    /// The family's name; samples are `<name>_bucket`, `<name>_sum` and `<name>_count`.
    public var name: String { descriptor.name }

    /// Records `value` in the series for `labelValues`. A value equal to a bound belongs to that
    /// bound's bucket (`le` means less or equal); NaN counts only in `+Inf` and poisons `_sum`,
    /// as in the Go client.
    public func observe(_ value: Double, _ labelValues: [String] = []) {
        descriptor.checkLabelCount(labelValues)
        observe(value, at: LabelValues(labelValues))
    }

    /// A handle on the series for `labelValues`, which shows (all zero) from now on. Keep it
    /// for a hot path: its updates build no label array and check the label count only once.
    public func series(_ labelValues: [String]) -> Series {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        let slots = upperBounds.count + 1
        storage.withLock { if $0[key] == nil { $0[key] = Buckets(bucketCounts: Array(repeating: 0, count: slots)) } }
        return Series(family: self, key: key)
    }

    /// One series of a histogram, its label values bound.
    public struct Series: Sendable {
        let family: Histogram
        let key: LabelValues

        public func observe(_ value: Double) { family.observe(value, at: key) }
    }

    private func observe(_ value: Double, at key: LabelValues) {
        let bucket = bucketIndex(for: value)
        let slots = upperBounds.count + 1
        storage.withLock { all in
            // The default is an autoclosure: built only for a new set of label values.
            all[key, default: Buckets(bucketCounts: Array(repeating: 0, count: slots))].record(value, in: bucket)
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
        read(labelValues) { $0?.count } ?? 0
    }

    /// Sum of the observations in one series, 0 when none.
    public func sum(_ labelValues: [String] = []) -> Double {
        read(labelValues) { $0?.sum } ?? 0
    }

    /// Cumulative counts per bucket as exposed (`le` ascending, the last one `+Inf`).
    public func cumulativeBucketCounts(_ labelValues: [String] = []) -> [(upperBound: Double, count: UInt64)] {
        let counts = read(labelValues) { $0?.cumulativeCounts() } ?? Array(repeating: 0, count: upperBounds.count + 1)
        return Array(zip(upperBounds + [.infinity], counts))
    }

    /// Reads one series under the lock, so no copy of its bucket array escapes and forces the
    /// next `observe` to copy it.
    private func read<Result>(_ labelValues: [String], _ body: (Buckets?) -> Result) -> Result {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        return storage.withLock { body($0[key]) }
    }

    func write(to writer: inout ExpositionWriter) {
        let snapshot = sortedSnapshot(storage) { (cumulative: $0.cumulativeCounts(), sum: $0.sum, count: $0.count) }
        writer.writeHeader(descriptor)
        let name = descriptor.name, labelNames = descriptor.labelNames
        for (key, value) in snapshot {
            for (count, bound) in zip(value.cumulative, boundLabels) {
                writer.writeSample(name: name, suffix: "_bucket", labelNames: labelNames, labelValues: key.values,
                                   extraLabel: ("le", bound), value: Double(count))
            }
            writer.writeSample(name: name, suffix: "_sum", labelNames: labelNames, labelValues: key.values, value: value.sum)
            writer.writeSample(name: name, suffix: "_count", labelNames: labelNames, labelValues: key.values,
                               value: Double(value.count))
        }
    }
}

extension Histogram.Buckets {
    mutating func record(_ value: Double, in bucket: Int) {
        bucketCounts[bucket] += 1
        sum += value
        count += 1
    }

    /// Counts as exposed: each bucket includes every bucket below it; the last is the total.
    func cumulativeCounts() -> [UInt64] {
        var running: UInt64 = 0
        return bucketCounts.map { count in
            running += count
            return running
        }
    }
}
