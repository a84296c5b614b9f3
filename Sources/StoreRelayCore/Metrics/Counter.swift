
/// A monotonically increasing count, one series per set of label values. Shaped like
/// swift-metrics' `Counter`, but a family: pass the label values on each call.
///
/// Thread-safe. An increment takes this family's lock for one dictionary update; it allocates
/// only the first time a set of label values is seen.
public final class Counter: Sendable, MetricFamily {
    let descriptor: MetricDescriptor
    private let storage: Locked<[LabelValues: Double]>

    init(descriptor: MetricDescriptor) {
        self.descriptor = descriptor
        storage = Locked(descriptor.initialSeries(0))
    }

    /// The family's name, with its `_total` suffix.
    public var name: String { descriptor.name }

    /// Adds `amount` (zero or more) to the series for `labelValues`, which must have one value
    /// per label name given at registration.
    public func increment(_ labelValues: [String] = [], by amount: Double = 1) {
        descriptor.checkLabelCount(labelValues)
        add(amount, to: LabelValues(labelValues))
    }

    private func add(_ amount: Double, to key: LabelValues) {
        precondition(amount >= 0, "counter '\(descriptor.name)' cannot go down (increment by \(amount))")
        storage.withLock { $0[key, default: 0] += amount }
    }

    /// A handle on the series for `labelValues`, which shows as 0 from now on. Keep it for a
    /// hot path: its updates build no label array and check the label count only once.
    public func series(_ labelValues: [String]) -> Series {
        descriptor.checkLabelCount(labelValues)
        let key = LabelValues(labelValues)
        storage.withLock { if $0[key] == nil { $0[key] = 0 } }
        return Series(family: self, key: key)
    }

    /// One series of a counter, its label values bound.
    public struct Series: Sendable {
        let family: Counter
        let key: LabelValues

        /// Adds `amount` (zero or more).
        public func increment(by amount: Double = 1) { family.add(amount, to: key) }

        /// The current value.
        public var value: Double { family.storage.withLock { $0[key] } ?? 0 }
    }

    /// The current value of one series, 0 when it was never incremented. For tests and
    /// status pages; scrapes use the registry's `render()`.
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
