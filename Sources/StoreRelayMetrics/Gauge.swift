import StoreRelaySupport

/// A value that goes up and down, one series per set of label values. For values that are
/// cheaper to compute at scrape time (queue depths, bytes on disk) register a sampled gauge
/// with `MetricsRegistry.gauge(_:help:labels:sample:)` instead.
///
/// Thread-safe; allocates only the first time a set of label values is seen.
public final class Gauge: Sendable, MetricFamily {
    let descriptor: MetricDescriptor
    private let series: Locked<[LabelValues: Double]>

    init(descriptor: MetricDescriptor) {
        self.descriptor = descriptor
        series = Locked(descriptor.initialSeries(0))
    }

    /// The family's name.
    public var name: String { descriptor.name }

    /// Sets the series for `labelValues` to `value`.
    public func set(_ value: Double, _ labelValues: [String] = []) {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        series.withLock { $0[key] = value }
    }

    /// Adds `amount`, which may be negative, to the series for `labelValues`.
    public func add(_ amount: Double, _ labelValues: [String] = []) {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        series.withLock { $0[key, default: 0] += amount }
    }

    /// The current value of one series, 0 when it was never set. For tests and status pages.
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
