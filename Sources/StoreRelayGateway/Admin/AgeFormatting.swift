/// Compact ages for tables: `42s`, `17m`, `5h 03m`, `12d 4h`.
public enum AgeFormatting {
    /// The time from `milliseconds` ago to now; negative spans (clock skew) read as `0s`.
    public static func describe(milliseconds: Int64) -> String {
        let seconds = max(0, milliseconds / 1000)
        switch seconds {
        case ..<60: return "\(seconds)s"
        case ..<3600: return "\(seconds / 60)m"
        case ..<86400:
            let minutes = seconds % 3600 / 60
            return "\(seconds / 3600)h " + (minutes < 10 ? "0" : "") + "\(minutes)m"
        default: return "\(seconds / 86400)d \(seconds % 86400 / 3600)h"
        }
    }
}
