
/// One metric family as the registry holds it: a descriptor and a way to write its samples.
protocol MetricFamily: AnyObject, Sendable {
    var descriptor: MetricDescriptor { get }

    /// Writes `# HELP`, `# TYPE` and every sample, ordered by label values.
    func write(to writer: inout ExpositionWriter)
}

extension MetricDescriptor {
    /// A label-count mismatch is a programming error at the call site, never bad input.
    @inline(__always)
    func checkLabelCount(_ labelValues: [String], file: StaticString = #file, line: UInt = #line) {
        precondition(
            labelValues.count == labelNames.count,
            "metric '\(name)' has labels \(labelNames) but was given \(labelValues.count) values",
            file: file, line: line
        )
    }

    /// The initial series of a family: a family without labels has exactly one series, so it
    /// is exposed as 0 from registration on; labelled series appear when first used.
    func initialSeries<Value>(_ zero: Value) -> [LabelValues: Value] {
        labelNames.isEmpty ? [LabelValues([]): zero] : [:]
    }
}

/// The series of a family in scrape order (sorted by label values, byte-wise), each value made
/// by `copy` while the lock is held.
///
/// Copying out under the lock, rather than taking the dictionary itself, keeps the dictionary
/// (and any array inside a value) uniquely referenced, so the next update after a scrape does
/// not copy the whole family on the hot path. Sorting happens after the lock is released.
func sortedSnapshot<Value, Copy>(
    _ storage: Locked<[LabelValues: Value]>, copy: (Value) -> Copy
) -> [(key: LabelValues, value: Copy)] {
    var pairs = storage.withLock { series in series.map { (key: $0.key, value: copy($0.value)) } }
    pairs.sort { LabelValues.precedes($0.key, $1.key) }
    return pairs
}

/// Series in scrape order, as computed at once (sampled gauges).
func sortedSeries<Value>(_ series: [LabelValues: Value]) -> [(key: LabelValues, value: Value)] {
    series.sorted { LabelValues.precedes($0.key, $1.key) }
}
