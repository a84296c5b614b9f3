
/// A value that goes up and down, one series per set of label values. For values that are
/// cheaper to compute at scrape time (queue depths, bytes on disk) register a sampled gauge
/// with `MetricsRegistry.gauge(_:help:labels:sample:)` instead.
///
/// Thread-safe; allocates only the first time a set of label values is seen.
public final class Gauge: Sendable, MetricFamily {
    let descriptor: MetricDescriptor
    private let storage: Locked<[LabelValues: Double]>

    init(descriptor: MetricDescriptor) {
        self.descriptor = descriptor
        storage = Locked(descriptor.initialSeries(0))
    }

    /// The family's name.
    public var name: String { descriptor.name }

    /// Sets the series for `labelValues` to `value`.
    public func set(_ value: Double, _ labelValues: [String] = []) {
        descriptor.checkLabelCount(labelValues)
        set(value, at: LabelValues(labelValues))
    }

    /// Adds `amount`, which may be negative, to the series for `labelValues`.
    public func add(_ amount: Double, _ labelValues: [String] = []) {
        descriptor.checkLabelCount(labelValues)
        add(amount, at: LabelValues(labelValues))
    }

    /// A handle on the series for `labelValues`, which shows as 0 from now on. Keep it for a
    /// hot path: its updates build no label array and check the label count only once.
    public func series(_ labelValues: [String]) -> Series {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        storage.withLock { if $0[key] == nil { $0[key] = 0 } }
        return Series(family: self, key: key)
    }

    /// One series of a gauge, its label values bound.
    public struct Series: Sendable {
        let family: Gauge
        let key: LabelValues

        public func set(_ value: Double) { family.set(value, at: key) }
        public func add(_ amount: Double) { family.add(amount, at: key) }
        public var value: Double { family.storage.withLock { $0[key] } ?? 0 }
    }

    private func set(_ value: Double, at key: LabelValues) {
        storage.withLock { $0[key] = value }
    }

    private func add(_ amount: Double, at key: LabelValues) {
        storage.withLock { $0[key, default: 0] += amount }
    }

    /// The current value of one series, 0 when it was never set. For tests and status pages.
    public func value(_ labelValues: [String] = []) -> Double {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        return storage.withLock { $0[key] } ?? 0
    }

    func write(to writer: inout ExpositionWriter) {
        let snapshot = sortedSnapshot(storage) { $0 }
        writer.writeHeader(descriptor)
        for (key, value) in snapshot {
            writer.writeSample(name: descriptor.name, labelNames: descriptor.labelNames, labelValues: key.values, value: value)
        }
    }
}
