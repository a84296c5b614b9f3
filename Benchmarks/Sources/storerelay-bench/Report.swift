import BenchKit
#if canImport(Glibc)
import Glibc
#endif

/// Prints the figures as they are measured (one writer, the main thread), and keeps the
/// target checks for the summary at the end.
enum Report {
    nonisolated(unsafe) private static var checks: [(met: Bool?, text: String)] = []

    static func section(_ title: String) {
        line("")
        line("== \(title)")
    }

    static func line(_ text: String) {
        let bytes = Array((text + "\n").utf8)
        _ = bytes.withUnsafeBytes { write(1, $0.baseAddress!, $0.count) }
    }

    /// Records a target: met, missed, or not measured (nil).
    static func check(_ met: Bool?, _ text: String) {
        checks.append((met, text))
        line("   target: \(text) -> \(met.map { $0 ? "MET" : "NOT MET" } ?? "not measured")")
    }

    static func summary() {
        section("Targets")
        for check in checks {
            line("   [\(check.met.map { $0 ? "MET" : "NOT MET" } ?? "n/a")] \(check.text)")
        }
    }
}
