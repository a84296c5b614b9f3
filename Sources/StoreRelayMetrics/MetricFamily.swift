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

/// Series of a family in scrape order: sorted by label values, byte-wise.
func sortedSeries<Value>(_ series: [LabelValues: Value]) -> [(key: LabelValues, value: Value)] {
    series.sorted { LabelValues.precedes($0.key, $1.key) }
}
