/// Builds the Prometheus text exposition format, version 0.0.4, line by line.
///
/// The escaping rules are the format's own: in label values a backslash, a double quote and a
/// line feed become `\\`, `\"` and `\n`; in HELP text only the backslash and the line feed are
/// escaped. Everything else, including any Unicode, is written as UTF-8 unchanged.
/// https://prometheus.io/docs/instrumenting/exposition_formats/#text-based-format
struct ExpositionWriter {
    private(set) var text = ""

    init(capacity: Int = 4096) {
        text.reserveCapacity(capacity)
    }

    /// The `# HELP` and `# TYPE` lines every family gets, even before its first sample.
    mutating func writeHeader(_ descriptor: MetricDescriptor) {
        text += "# HELP "
        text += descriptor.name
        text += " "
        Self.appendEscaped(descriptor.help, escapingQuotes: false, to: &text)
        text += "\n# TYPE "
        text += descriptor.name
        text += " "
        text += descriptor.kind.rawValue
        text += "\n"
    }

    /// One sample line: `name{label="value",...} value`. `extraLabel` is the histogram's `le`,
    /// already formatted, written after the family's own labels.
    mutating func writeSample(
        name: String, suffix: String = "", labelNames: [String], labelValues: [String],
        extraLabel: (name: String, value: String)? = nil, value: Double
    ) {
        text += name
        text += suffix
        if !labelNames.isEmpty || extraLabel != nil {
            text += "{"
            var first = true
            for (labelName, labelValue) in zip(labelNames, labelValues) {
                if !first { text += "," }
                first = false
                appendLabel(labelName, labelValue)
            }
            if let extraLabel {
                if !first { text += "," }
                appendLabel(extraLabel.name, extraLabel.value)
            }
            text += "}"
        }
        text += " "
        text += PrometheusFloat.sampleValue(value)
        text += "\n"
    }

    private mutating func appendLabel(_ name: String, _ value: String) {
        text += name
        text += "=\""
        Self.appendEscaped(value, escapingQuotes: true, to: &text)
        text += "\""
    }

    /// Appends `value` with `\` and line feed escaped, and `"` too when `escapingQuotes`.
    static func appendEscaped(_ value: String, escapingQuotes: Bool, to text: inout String) {
        // The common case, nothing to escape, appends the string whole.
        guard value.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A || ($0 == 0x22 && escapingQuotes) }) else {
            text += value
            return
        }
        for scalar in value.unicodeScalars {
            switch scalar {
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\"" where escapingQuotes: text += "\\\""
            default: text.unicodeScalars.append(scalar)
            }
        }
    }
}
