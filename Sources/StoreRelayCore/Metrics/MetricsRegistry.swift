
/// The gateway's metrics: families registered once at start-up, updated on the hot path,
/// exposed by `render()` on `GET /metrics` in the Prometheus text format.
///
/// Shaped like swift-metrics without depending on it: handles are created by name with
/// dimensions (here, label names) and then only updated. Each family has its own lock, so
/// updates to different families never contend; the registry's lock is only taken to register
/// and to list families for a scrape.
public final class MetricsRegistry: Sendable {
    private struct State {
        /// In registration order, which is the order of a scrape.
        var families: [any MetricFamily] = []
        var indexByName: [String: Int] = [:]
        /// Every sample or family name in use, with the family that uses it.
        var claimedNames: [String: String] = [:]
    }

    private let state = Locked(State())

    /// The `Content-Type` of `render()`'s output.
    public static let contentType = "text/plain; version=0.0.4; charset=utf-8"

    public init() {}

    /// Registers a counter, or returns the one already registered under `name` with the same
    /// labels. `name` must end in `_total`.
    public func counter(_ name: String, help: String, labels: [String] = []) -> Counter {
        let descriptor = MetricDescriptor(name: name, help: help, kind: .counter, labelNames: labels)
        return register(descriptor) { Counter(descriptor: descriptor) }
    }

    /// Registers a gauge, or returns the one already registered under `name` with the same labels.
    public func gauge(_ name: String, help: String, labels: [String] = []) -> Gauge {
        let descriptor = MetricDescriptor(name: name, help: help, kind: .gauge, labelNames: labels)
        return register(descriptor) { Gauge(descriptor: descriptor) }
    }

    /// Registers a histogram with the given finite, strictly increasing upper bounds (`+Inf` is
    /// implied), or returns the one already registered with the same labels and bounds.
    public func histogram(_ name: String, help: String, labels: [String] = [], buckets: [Double]) -> Histogram {
        let descriptor = MetricDescriptor(name: name, help: help, kind: .histogram, labelNames: labels)
        let created = Histogram(descriptor: descriptor, buckets: buckets)
        return register(descriptor, sameAs: { $0.upperBounds == created.upperBounds }) { created }
    }

    /// A gauge whose samples are computed at scrape time (queue depths, journal bytes...).
    /// `sample` runs on the scraping thread, outside the registry's locks, and must return each
    /// set of label values at most once. Registering the name again replaces `sample`.
    public func gauge(
        _ name: String, help: String, labels: [String] = [],
        sample: @escaping @Sendable () -> [(labels: [String], value: Double)]
    ) {
        let descriptor = MetricDescriptor(name: name, help: help, kind: .gauge, labelNames: labels)
        let family = register(descriptor) { SampledGauge(descriptor: descriptor, sampler: sample) }
        family.replaceSampler(sample)
    }

    /// The Prometheus text exposition format (version 0.0.4): families in registration order,
    /// each with `# HELP` and `# TYPE`, samples sorted by label values.
    public func render() -> String {
        let families = state.withLock { $0.families }
        var writer = ExpositionWriter()
        for family in families {
            family.write(to: &writer)
        }
        return writer.text
    }

    /// The names of the registered families, in registration order.
    public var familyNames: [String] {
        state.withLock { $0.families.map(\.descriptor.name) }
    }

    /// Returns the family registered under the descriptor's name when it is the same kind of
    /// family with the same labels (and `sameAs` agrees), otherwise registers `make()`.
    /// Any other clash is a programming error.
    private func register<Family: MetricFamily>(
        _ descriptor: MetricDescriptor,
        sameAs: (Family) -> Bool = { _ in true },
        make: () -> Family
    ) -> Family {
        state.withLock { state in
            if let index = state.indexByName[descriptor.name] {
                let existing = state.families[index]
                guard let family = existing as? Family, existing.descriptor.kind == descriptor.kind,
                      existing.descriptor.labelNames == descriptor.labelNames, sameAs(family)
                else {
                    preconditionFailure(
                        "metric '\(descriptor.name)' is already registered as \(type(of: existing)) "
                            + "\(existing.descriptor.kind.rawValue) with labels \(existing.descriptor.labelNames)"
                    )
                }
                return family
            }
            let claimed = descriptor.claimedNames
            for name in claimed {
                if let owner = state.claimedNames[name] {
                    preconditionFailure("metric '\(descriptor.name)' would expose '\(name)', already used by '\(owner)'")
                }
            }
            let family = make()
            state.indexByName[descriptor.name] = state.families.count
            state.families.append(family)
            for name in claimed { state.claimedNames[name] = descriptor.name }
            return family
        }
    }
}
