#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Timestamp {
    /// Parses the form `iso8601` writes — `2026-11-20T10:15:30.123Z` — and the same without
    /// milliseconds. Other offsets than `Z` are not accepted: StoreRelay writes UTC only.
    public init?(iso8601 text: String) {
        let bytes = Array(text.utf8)
        guard bytes.count == 20 || bytes.count == 24, bytes.last == UInt8(ascii: "Z"),
              bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"), bytes[10] == UInt8(ascii: "T"),
              bytes[13] == UInt8(ascii: ":"), bytes[16] == UInt8(ascii: ":"),
              let year = Self.number(bytes, 0, 4), let month = Self.number(bytes, 5, 2),
              let day = Self.number(bytes, 8, 2), let hour = Self.number(bytes, 11, 2),
              let minute = Self.number(bytes, 14, 2), let second = Self.number(bytes, 17, 2)
        else { return nil }
        var millis = 0
        if bytes.count == 24 {
            guard bytes[19] == UInt8(ascii: "."), let ms = Self.number(bytes, 20, 3) else { return nil }
            millis = ms
        }
        guard let seconds = Self.epochSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        self.init(milliseconds: seconds * 1000 + Int64(millis))
    }

    /// Parses an HTTP-date (RFC 9110 §5.6.7): the preferred IMF-fixdate
    /// `Sun, 06 Nov 1994 08:49:37 GMT`, and the obsolete RFC 850 `Sunday, 06-Nov-94 08:49:37 GMT`
    /// and asctime `Sun Nov  6 08:49:37 1994` forms, as recipients must.
    public init?(httpDate text: String) {
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let parts = text.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        var day: Int?, month: Int?, year: Int?, clock: String?
        if parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT" {
            day = Int(parts[1]); month = months.firstIndex(of: parts[2]).map { $0 + 1 }
            year = parts[3].count == 4 ? Int(parts[3]) : nil; clock = parts[4]
        } else if parts.count == 4, parts[0].hasSuffix(","), parts[3] == "GMT" {
            let date = parts[1].split(separator: "-").map(String.init)
            guard date.count == 3, let yy = Int(date[2]), date[2].count == 2 else { return nil }
            day = Int(date[0]); month = months.firstIndex(of: date[1]).map { $0 + 1 }
            year = yy < 70 ? 2000 + yy : 1900 + yy; clock = parts[2]
        } else if parts.count == 5 {
            month = months.firstIndex(of: parts[1]).map { $0 + 1 }; day = Int(parts[2])
            clock = parts[3]; year = parts[4].count == 4 ? Int(parts[4]) : nil
        }
        guard let day, let month, let year, let clock else { return nil }
        let hms = clock.split(separator: ":").map { Int($0) }
        guard hms.count == 3, let hour = hms[0], let minute = hms[1], let second = hms[2],
              let seconds = Self.epochSeconds(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        else { return nil }
        self.init(seconds: seconds)
    }

    private static func number(_ bytes: [UInt8], _ start: Int, _ count: Int) -> Int? {
        var value = 0
        for byte in bytes[start..<(start + count)] {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return value
    }

    private static func epochSeconds(year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int) -> Int64? {
        guard (1...12).contains(month), (1...31).contains(day), (0...23).contains(hour),
              (0...59).contains(minute), (0...60).contains(second) else { return nil }
        var parts = tm()
        parts.tm_year = Int32(year - 1900)
        parts.tm_mon = Int32(month - 1)
        parts.tm_mday = Int32(day)
        parts.tm_hour = Int32(hour)
        parts.tm_min = Int32(minute)
        parts.tm_sec = Int32(second)
        let seconds = timegm(&parts)
        // timegm normalizes 31 February into March: reject dates that did not survive.
        guard parts.tm_mday == Int32(day), parts.tm_mon == Int32(month - 1) else { return nil }
        return Int64(seconds)
    }
}
