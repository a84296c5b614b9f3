/// Formats numbers the way the Prometheus Go client does, so `le` labels match what every
/// other exporter writes and dashboards that select on `le="0.005"` keep working.
enum PrometheusFloat {
    /// A sample value: whole numbers up to 2^53 as plain integers (`42`, not `42.0` nor
    /// `4.2e+01`), everything else as `goString`.
    static func sampleValue(_ value: Double) -> String {
        if value.isFinite, value == value.rounded(.towardZero), value.magnitude <= 9_007_199_254_740_992 {
            return String(Int64(value))
        }
        return goString(value)
    }

    /// Go's `strconv.FormatFloat(value, 'g', -1, 64)`, with the format's `+Inf`, `-Inf` and
    /// `NaN`: the shortest digits that read back to the same double, in exponent form when the
    /// decimal exponent is below -4 or at least 6 (`1e-05`, `0.0005`, `123456`, `1e+06`).
    static func goString(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value > 0 ? "+Inf" : "-Inf" }
        if value == 0 { return value.sign == .minus ? "-0" : "0" }
        let (digits, pointPosition) = shortestDigits(value.magnitude)
        var out = value < 0 ? "-" : ""
        let exponent = pointPosition - 1
        if exponent < -4 || exponent >= 6 {
            out.unicodeScalars.append(Unicode.Scalar(digits[0]))
            if digits.count > 1 {
                out += "."
                for digit in digits.dropFirst() { out.unicodeScalars.append(Unicode.Scalar(digit)) }
            }
            out += exponent < 0 ? "e-" : "e+"
            let magnitude = exponent.magnitude
            if magnitude < 10 { out += "0" }
            out += String(magnitude)
        } else {
            if pointPosition <= 0 {
                out += "0"
            } else {
                for index in 0..<pointPosition {
                    out.unicodeScalars.append(Unicode.Scalar(index < digits.count ? digits[index] : UInt8(ascii: "0")))
                }
            }
            if digits.count > pointPosition {
                out += "."
                // Positions before the first digit (0.000123) are zeros.
                for index in pointPosition..<digits.count {
                    out.unicodeScalars.append(Unicode.Scalar(index < 0 ? UInt8(ascii: "0") : digits[index]))
                }
            }
        }
        return out
    }

    /// The shortest round-trip decimal digits of a positive finite `value` and the position of
    /// the decimal point: value = 0.d1d2d3... × 10^pointPosition. Swift's `description` already
    /// computes the shortest round-trip digits; this only takes its layout apart.
    static func shortestDigits(_ value: Double) -> (digits: [UInt8], pointPosition: Int) {
        let text = value.description.utf8
        var digits: [UInt8] = []
        var pointPosition: Int? = nil
        var exponent = 0
        var index = text.startIndex
        while index != text.endIndex {
            let byte = text[index]
            if byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
                exponent = Int(String(decoding: text[text.index(after: index)...], as: UTF8.self))!
                break
            }
            if byte == UInt8(ascii: ".") {
                pointPosition = digits.count
            } else {
                digits.append(byte)
            }
            index = text.index(after: index)
        }
        var point = (pointPosition ?? digits.count) + exponent
        while digits.first == UInt8(ascii: "0") {
            digits.removeFirst()
            point -= 1
        }
        while digits.last == UInt8(ascii: "0") { digits.removeLast() }
        return (digits, point)
    }
}
