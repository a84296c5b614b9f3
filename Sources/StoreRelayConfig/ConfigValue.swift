import StoreRelayCore

/// Why a single value was rejected; the parser adds the file position and the option name.
struct ConfigValueError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

/// Parsers for the scalar values of routes.conf: integers, sizes, durations, booleans,
/// environment names. Each is total: any string gives a value or a sentence saying what was
/// expected, never a trap (overflow included).
enum ConfigValue {
    static let sizeExample = "a size like 512, 64KiB, 1MiB or 2GiB"
    static let durationExample = "a duration like 500ms, 10s, 5m, 1h or 3d"

    /// A non-negative decimal integer within `range`; no sign, no separators.
    static func integer(_ text: String, in range: ClosedRange<Int>) throws(ConfigValueError) -> Int {
        if text.hasPrefix("-") { throw ConfigValueError("'\(text)' is negative (expected a number from \(range.lowerBound) to \(range.upperBound))") }
        guard let value = decimal(Substring(text)) else {
            throw ConfigValueError("'\(text)' is not a whole number (expected a number from \(range.lowerBound) to \(range.upperBound))")
        }
        guard let int = Int(exactly: value), range.contains(int) else {
            throw ConfigValueError("\(text) is out of range (expected a number from \(range.lowerBound) to \(range.upperBound))")
        }
        return int
    }

    /// A byte count: digits, then optionally `KiB`, `MiB` or `GiB` (or `B`).
    static func size(_ text: String) throws(ConfigValueError) -> Int {
        if text.hasPrefix("-") { throw ConfigValueError("'\(text)' is negative (expected \(sizeExample))") }
        let digits = text.prefix { ("0"..."9").contains($0) }
        let unit = text[digits.endIndex...]
        guard !digits.isEmpty else { throw ConfigValueError("'\(text)' is not a size (expected \(sizeExample))") }
        let multiplier: UInt64
        switch unit {
        case "", "B": multiplier = 1
        case "KiB": multiplier = 1 << 10
        case "MiB": multiplier = 1 << 20
        case "GiB": multiplier = 1 << 30
        default: throw ConfigValueError("unknown size unit '\(unit)' in '\(text)' (expected KiB, MiB or GiB)")
        }
        guard let number = decimal(digits) else { throw ConfigValueError("size '\(text)' is too large") }
        let (bytes, overflow) = number.multipliedReportingOverflow(by: multiplier)
        guard !overflow, let result = Int(exactly: bytes) else { throw ConfigValueError("size '\(text)' is too large") }
        return result
    }

    /// A duration: one or more number-unit pairs (`10s`, `1h30m`), units `ms s m h d`.
    static func duration(_ text: String) throws(ConfigValueError) -> Duration {
        if text.hasPrefix("-") { throw ConfigValueError("'\(text)' is negative (expected \(durationExample))") }
        var rest = Substring(text)
        var total: Int64 = 0
        guard !rest.isEmpty else { throw ConfigValueError("empty duration (expected \(durationExample))") }
        while !rest.isEmpty {
            let digits = rest.prefix { ("0"..."9").contains($0) }
            guard !digits.isEmpty else { throw ConfigValueError("'\(text)' is not a duration (expected \(durationExample))") }
            rest = rest[digits.endIndex...]
            let unit = rest.prefix { !("0"..."9").contains($0) }
            rest = rest[unit.endIndex...]
            let millisecondsPerUnit: Int64
            switch unit {
            case "ms": millisecondsPerUnit = 1
            case "s": millisecondsPerUnit = 1_000
            case "m": millisecondsPerUnit = 60_000
            case "h": millisecondsPerUnit = 3_600_000
            case "d": millisecondsPerUnit = 86_400_000
            case "": throw ConfigValueError("duration '\(text)' needs a unit (expected ms, s, m, h or d, e.g. 10s)")
            default: throw ConfigValueError("unknown duration unit '\(unit)' in '\(text)' (expected ms, s, m, h or d)")
            }
            guard let number = decimal(digits), let count = Int64(exactly: number) else {
                throw ConfigValueError("duration '\(text)' is too large")
            }
            let (part, overflow) = count.multipliedReportingOverflow(by: millisecondsPerUnit)
            let (sum, overflow2) = total.addingReportingOverflow(part)
            guard !overflow, !overflow2 else { throw ConfigValueError("duration '\(text)' is too large") }
            total = sum
        }
        return .milliseconds(total)
    }

    /// `yes` or `no`.
    static func boolean(_ text: String) throws(ConfigValueError) -> Bool {
        switch text {
        case "yes": return true
        case "no": return false
        default: throw ConfigValueError("'\(text)' is not yes or no")
        }
    }

    /// One of the four environment names, lowercase as StoreRelay writes them.
    static func environment(_ text: String) throws(ConfigValueError) -> AppStoreEnvironment {
        guard let environment = AppStoreEnvironment(rawValue: text) else {
            let names = AppStoreEnvironment.allCases.map(\.rawValue).joined(separator: ", ")
            throw ConfigValueError("unknown environment '\(text)' (expected one of: \(names))")
        }
        return environment
    }

    /// ASCII decimal digits as a UInt64, nil when empty, not all digits, or too large.
    static func decimal(_ digits: Substring) -> UInt64? {
        guard !digits.isEmpty else { return nil }
        var value: UInt64 = 0
        for scalar in digits.unicodeScalars {
            guard ("0"..."9").contains(scalar) else { return nil }
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (sum, o2) = times10.addingReportingOverflow(UInt64(scalar.value - 48))
            guard !o1, !o2 else { return nil }
            value = sum
        }
        return value
    }
}
