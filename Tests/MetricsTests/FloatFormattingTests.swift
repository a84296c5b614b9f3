import Testing
@testable import StoreRelayCore

/// Numbers as the Prometheus Go client writes them (`strconv.FormatFloat(v, 'g', -1, 64)`).
@Suite struct FloatFormattingTests {
    /// Expected strings are Go's output for the same doubles.
    static let goCases: [(Double, String)] = [
        (0, "0"), (-0.0, "-0"), (1, "1"), (-1, "-1"), (10, "10"), (2.5, "2.5"), (0.1, "0.1"),
        (0.005, "0.005"), (0.0005, "0.0005"), (0.0001, "0.0001"), (0.00001, "1e-05"), (0.000123, "0.000123"),
        (0.0000123, "1.23e-05"), (123456, "123456"), (999999, "999999"), (1_000_000, "1e+06"),
        (1_234_567, "1.234567e+06"), (12345.678, "12345.678"), (1e21, "1e+21"), (1e100, "1e+100"),
        (-0.25, "-0.25"), (0.1 + 0.2, "0.30000000000000004"), (.pi, "3.141592653589793"),
        (.leastNonzeroMagnitude, "5e-324"), (.greatestFiniteMagnitude, "1.7976931348623157e+308"),
        (.infinity, "+Inf"), (-.infinity, "-Inf"), (.nan, "NaN"),
    ]

    @Test(arguments: goCases)
    func goStyle(value: Double, expected: String) {
        #expect(PrometheusFloat.goString(value) == expected)
    }

    @Test(arguments: goCases)
    func goStyleReadsBackToTheSameDouble(value: Double, expected: String) {
        guard value.isFinite else { return }
        #expect(Double(PrometheusFloat.goString(value)) == value)
    }

    @Test func sampleValuesWriteWholeNumbersInFull() {
        #expect(PrometheusFloat.sampleValue(42) == "42")
        #expect(PrometheusFloat.sampleValue(-7) == "-7")
        #expect(PrometheusFloat.sampleValue(-0.0) == "0")
        #expect(PrometheusFloat.sampleValue(1_000_000) == "1000000")
        #expect(PrometheusFloat.sampleValue(9_007_199_254_740_992) == "9007199254740992")
        #expect(PrometheusFloat.sampleValue(1e16) == "1e+16")
        #expect(PrometheusFloat.sampleValue(0.75) == "0.75")
        #expect(PrometheusFloat.sampleValue(.nan) == "NaN")
        #expect(PrometheusFloat.sampleValue(.infinity) == "+Inf")
    }

    @Test func latencyBucketsRenderAsPrometheusWritesThem() {
        #expect(MetricBuckets.latencySeconds.map(PrometheusFloat.goString) == [
            "0.0005", "0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1", "2.5", "5", "10",
        ])
    }
}
