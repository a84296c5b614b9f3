
/// A gauge whose samples a closure computes at scrape time, so the hot path never has to keep
/// it up to date (queue depths, journal bytes, breaker states).
final class SampledGauge: Sendable, MetricFamily {
    typealias Sampler = @Sendable () -> [(labels: [String], value: Double)]

    let descriptor: MetricDescriptor
    private let sampler: Locked<Sampler>

    init(descriptor: MetricDescriptor, sampler: @escaping Sampler) {
        self.descriptor = descriptor
        self.sampler = Locked(sampler)
    }

    /// Registering the name again replaces the closure: the component that owns the value was
    /// rebuilt, and the old closure would report a dead instance.
    func replaceSampler(_ newSampler: @escaping Sampler) {
        sampler.withLock { $0 = newSampler }
    }

    func write(to writer: inout ExpositionWriter) {
        // Called outside every lock: the closure may take its owner's locks.
        let samples = sampler.current()
        var series: [LabelValues: Double] = [:]
        for sample in samples {
            descriptor.checkLabelCount(sample.labels)
            let previous = series.updateValue(sample.value, forKey: LabelValues(sample.labels))
            // Two samples with the same labels make the whole scrape invalid for Prometheus.
            precondition(previous == nil, "sampled gauge '\(descriptor.name)' produced the labels \(sample.labels) twice")
        }
        writer.writeHeader(descriptor)
        for (key, value) in sortedSeries(series) {
            writer.writeSample(name: descriptor.name, labelNames: descriptor.labelNames, labelValues: key.values, value: value)
        }
    }
}
