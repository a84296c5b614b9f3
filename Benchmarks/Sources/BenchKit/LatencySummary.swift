/// Percentiles of a set of latency samples (nanoseconds), by sorting: exact, and cheap for the
/// tens of thousands of samples a run produces.
public struct LatencySummary {
    public let count: Int
    private let sorted: [UInt64]

    public init(_ samples: [UInt64]) {
        sorted = samples.sorted()
        count = samples.count
    }

    /// The `p`-quantile (0...1) in milliseconds, nearest rank.
    public func ms(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))
        return Double(sorted[rank]) / 1e6
    }

    /// The samples, sorted (to pool several runs' into one summary).
    public var samples: [UInt64] { sorted }

    public var maxMs: Double { sorted.last.map { Double($0) / 1e6 } ?? .nan }

    public var meanMs: Double {
        guard !sorted.isEmpty else { return .nan }
        return Double(sorted.reduce(0, +)) / Double(sorted.count) / 1e6
    }

    /// `p50 1.23 ms  p99 4.56 ms  p99.9 7.89 ms  max 9.99 ms`.
    public var text: String {
        "p50 \(Format.ms(ms(0.5)))  p99 \(Format.ms(ms(0.99)))  p99.9 \(Format.ms(ms(0.999)))  max \(Format.ms(maxMs))"
    }
}

/// Number formatting for the printed figures.
public enum Format {
    public static func ms(_ value: Double) -> String {
        guard value.isFinite else { return "n/a" }
        return fixed(value, value < 10 ? 2 : 1) + " ms"
    }

    public static func fixed(_ value: Double, _ digits: Int) -> String {
        guard value.isFinite else { return "n/a" }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let rounded = (value * scale).rounded() / scale
        var text = "\(rounded)"
        if let dot = text.firstIndex(of: ".") {
            let decimals = text.distance(from: dot, to: text.endIndex) - 1
            if digits == 0 { text = String(text[..<dot]) } else if decimals < digits { text += String(repeating: "0", count: digits - decimals) }
        }
        return text
    }

    public static func rate(_ value: Double) -> String { fixed(value, 0) + "/s" }

    public static func mib(kilobytes: Int) -> String { fixed(Double(kilobytes) / 1024, 1) + " MiB" }
}
