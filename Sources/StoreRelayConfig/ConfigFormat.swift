/// Renders sizes and durations back in routes.conf syntax, so that `storerelay check` output
/// can be pasted into a file and mean the same thing.
public enum ConfigFormat {
    /// `bytes` in the largest of GiB, MiB, KiB that divides it exactly, else plain bytes.
    public static func size(_ bytes: Int) -> String {
        for (unit, factor) in [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)] where bytes != 0 && bytes % factor == 0 {
            return "\(bytes / factor)\(unit)"
        }
        return "\(bytes)"
    }

    /// `duration` in the largest of d, h, m, s, ms that divides it exactly.
    public static func duration(_ duration: Duration) -> String {
        let milliseconds = duration.wholeMilliseconds
        for (unit, factor) in [("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1_000)] as [(String, Int64)]
        where milliseconds != 0 && milliseconds % factor == 0 {
            return "\(milliseconds / factor)\(unit)"
        }
        return "\(milliseconds)ms"
    }
}
