/// What a metric family is: its name, help text, type and label names. Two registrations of one
/// name are the same family exactly when their descriptors agree (help text aside).
struct MetricDescriptor: Sendable {
    /// The `# TYPE` of a family in the text exposition format.
    enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    let name: String
    let help: String
    let kind: Kind
    let labelNames: [String]

    /// Validates everything the exposition format needs; a bad name is a programming error.
    init(name: String, help: String, kind: Kind, labelNames: [String]) {
        precondition(MetricDescriptor.isValidMetricName(name),
                     "metric name '\(name)' does not match [a-zA-Z_:][a-zA-Z0-9_:]*")
        if kind == .counter {
            // The `_total` suffix is the Prometheus naming convention and what OpenMetrics
            // parsers strip to find the family name; a counter without it reads as a gauge.
            precondition(name.hasSuffix("_total") && name != "_total",
                         "counter '\(name)' must be named with the _total suffix")
        }
        for label in labelNames {
            precondition(MetricDescriptor.isValidLabelName(label),
                         "label name '\(label)' of '\(name)' does not match [a-zA-Z_][a-zA-Z0-9_]* or starts with __")
        }
        precondition(Set(labelNames).count == labelNames.count, "duplicate label names \(labelNames) for '\(name)'")
        if kind == .histogram {
            // `le` is the bucket label the histogram adds itself.
            precondition(!labelNames.contains("le"), "histogram '\(name)' may not use the label name 'le'")
        }
        self.name = name
        self.help = help
        self.kind = kind
        self.labelNames = labelNames
    }

    /// Every sample or family name this family occupies in a scrape. Two families may not share
    /// any: `h_count` as a gauge would merge into histogram `h`, and a gauge `x` would collide
    /// with counter `x_total`, whose OpenMetrics family name is `x`.
    var claimedNames: [String] {
        switch kind {
        case .counter: [name, String(name.dropLast("_total".count))]
        case .gauge: [name]
        case .histogram: [name, name + "_bucket", name + "_sum", name + "_count"]
        }
    }

    /// `[a-zA-Z_:][a-zA-Z0-9_:]*`, the metric name syntax of the text format.
    static func isValidMetricName(_ name: String) -> Bool {
        isIdentifier(name, allowingColon: true)
    }

    /// `[a-zA-Z_][a-zA-Z0-9_]*` without the `__` prefix Prometheus reserves for itself.
    static func isValidLabelName(_ name: String) -> Bool {
        isIdentifier(name, allowingColon: false) && !name.hasPrefix("__")
    }

    private static func isIdentifier(_ name: String, allowingColon: Bool) -> Bool {
        guard !name.isEmpty else { return false }
        for (index, byte) in name.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "_"):
                continue
            case UInt8(ascii: "0")...UInt8(ascii: "9") where index > 0:
                continue
            case UInt8(ascii: ":") where allowingColon:
                continue
            default:
                return false
            }
        }
        return true
    }
}
