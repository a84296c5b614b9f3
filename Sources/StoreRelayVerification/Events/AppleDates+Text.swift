/// ISO-8601 text for Apple's dates without `Timestamp.iso8601`'s string concatenation: a
/// notification carries ten or so dates, and building each from seven padded pieces cost more
/// than the rest of normalization.
extension AppleDates {
    /// `milliseconds` as `YYYY-MM-DDTHH:MM:SS.mmmZ`, exactly the text `Timestamp.iso8601`
    /// gives; only for `earliest...latest` (four-digit years), which `milliseconds(_:)` ensures.
    ///
    /// Days to civil date by Howard Hinnant's `civil_from_days` (proleptic Gregorian, as
    /// `gmtime_r` counts).
    static func iso8601Text(milliseconds: Int64) -> String {
        let msPerDay: Int64 = 86_400_000
        var days = milliseconds / msPerDay
        var msOfDay = milliseconds % msPerDay
        if msOfDay < 0 { msOfDay += msPerDay; days -= 1 }

        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        let fields: [(value: Int64, width: Int, separator: UInt8)] = [
            (year, 4, UInt8(ascii: "-")), (month, 2, UInt8(ascii: "-")), (day, 2, UInt8(ascii: "T")),
            (msOfDay / 3_600_000, 2, UInt8(ascii: ":")), (msOfDay / 60_000 % 60, 2, UInt8(ascii: ":")),
            (msOfDay / 1000 % 60, 2, UInt8(ascii: ".")), (msOfDay % 1000, 3, UInt8(ascii: "Z")),
        ]
        return String(unsafeUninitializedCapacity: 24) { buffer in
            var end = 0
            for field in fields {
                var value = field.value
                for position in stride(from: end + field.width - 1, through: end, by: -1) {
                    buffer[position] = UInt8(ascii: "0") + UInt8(value % 10)
                    value /= 10
                }
                buffer[end + field.width] = field.separator
                end += field.width + 1
            }
            return end
        }
    }
}
