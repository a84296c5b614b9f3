import StoreRelaySupport

/// A monotonically increasing count, one series per set of label values. Shaped like
/// swift-metrics' `Counter`, but a family: pass the label values on each call.
///
/// Thread-safe. An increment takes this family's lock for one dictionary update; it allocates
/// only the first time a set of label values is seen.
public final class Counter: Sendable, MetricFamily {
    let descriptor: MetricDescriptor
    private let series: Locked<[LabelValues: Double]>

    init(descriptor: MetricDescriptor) {
        self.descriptor = descriptor
        series = Locked(descriptor.initialSeries(0))
    }

    /// The family's name, with its `_total` suffix.
    public var name: String { descriptor.name }

    /// Adds `amount` (zero or more) to the series for `labelValues`, which must have one value
    /// per label name given at registration.
    public func increment(_ labelValues: [String] = [], by amount: Double = 1) {
        descriptor.checkLabelCount(labelValues)
        precondition(amount >= 0, "counter '\(descriptor.name)' cannot go down (increment by \(amount))")
        let key = LabelValues(labelValues)
        series.withLock { $0[key, default: 0] += amount }
    }

    /// The current value of one series, 0 when it was never incremented. For tests and
    /// status pages; scrapes use the registry's `render()`.
    public func value(_ labelValues: [String] = []) -> Double {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        return series.withLock { $0[key] } ?? 0
    }

    func write(to writer: inout ExpositionWriter) {
        let snapshot = series.current
        writer.writeHeader(descriptor)
        for (key, value) in sortedSeries(snapshot) {
            writer.writeSample(name: descriptor.name, labelNames: descriptor.labelNames, labelValues: key.values, value: value)
        }
    }
}
