import BenchKit
import Foundation

/// The machine the figures come from: they mean nothing without it.
enum Machine {
    static func describe(binary: String) {
        let cpu = (readText("/proc/cpuinfo") ?? "").split(separator: "\n")
            .first { $0.hasPrefix("model name") }?.split(separator: ":", maxSplits: 1).last?
            .trimmingCharacters(in: .whitespaces) ?? "unknown"
        let kernel = (readText("/proc/sys/kernel/osrelease") ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
        let memory = (readText("/proc/meminfo") ?? "").split(separator: "\n").first { $0.hasPrefix("MemTotal") } ?? ""
        let formatter = ISO8601DateFormatter()
        Report.line("storerelay-bench \(formatter.string(from: Date()))")
        Report.line("machine: nproc \(ProcessInfo.processInfo.activeProcessorCount), CPU \(cpu), Linux \(kernel), \(memory.split(separator: " ", omittingEmptySubsequences: true).dropFirst().joined(separator: " "))")
        Report.line("load average: \((readText("/proc/loadavg") ?? "").trimmingCharacters(in: .whitespacesAndNewlines))")
        Report.line("gateway: \(binary)")
    }
}
