/// Histogram bucket upper bounds. The `+Inf` bucket is always implied and need not be listed.
public enum MetricBuckets {
    /// Request and delivery latencies in seconds, from 0.5 ms to 10 s: acknowledging Apple is
    /// sub-millisecond to a few ms, webhook deliveries reach seconds before they time out.
    public static let latencySeconds: [Double] = [
        0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
    ]

    /// `count` bounds `start, start*factor, start*factor², ...`.
    public static func exponential(start: Double, factor: Double, count: Int) -> [Double] {
        precondition(start > 0 && factor > 1 && count >= 1, "exponential buckets need start > 0, factor > 1, count >= 1")
        var bounds: [Double] = []
        var bound = start
        for _ in 0..<count {
            bounds.append(bound)
            bound *= factor
        }
        return bounds
    }

    /// `count` bounds `start, start+width, start+2*width, ...`.
    public static func linear(start: Double, width: Double, count: Int) -> [Double] {
        precondition(width > 0 && count >= 1, "linear buckets need width > 0, count >= 1")
        return (0..<count).map { start + Double($0) * width }
    }
}
