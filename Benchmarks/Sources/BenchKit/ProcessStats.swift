#if canImport(Glibc)
import Glibc
#endif

/// What /proc says about a process: resident memory and CPU time.
public enum ProcessStats {
    /// VmRSS and VmHWM (peak) of `pid`, in KiB; zeros when it is gone.
    public static func memory(pid: pid_t) -> (rss: Int, peak: Int) {
        guard let text = readText("/proc/\(pid)/status") else { return (0, 0) }
        var rss = 0, peak = 0
        for line in text.split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard fields.count >= 2 else { continue }
            if fields[0] == "VmRSS:" { rss = Int(fields[1]) ?? 0 }
            if fields[0] == "VmHWM:" { peak = Int(fields[1]) ?? 0 }
        }
        return (rss, peak)
    }

    /// User + system CPU time of `pid` (every thread), in nanoseconds, from /proc/PID/stat.
    public static func cpuNanoseconds(pid: pid_t) -> UInt64 {
        guard let text = readText("/proc/\(pid)/stat"), let close = text.lastIndex(of: ")") else { return 0 }
        let fields = text[text.index(after: close)...].split(separator: " ")
        // After "pid (comm)": the state is field 0, utime 11 and stime 12, in clock ticks.
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return 0 }
        return (user + system) * 1_000_000_000 / UInt64(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// CPU time the hypervisor gave to other guests while this machine's CPUs wanted to run
    /// (all CPUs together), in milliseconds since boot: the "steal" column of /proc/stat's
    /// `cpu` line. A latency tail that coincides with steal was the host's, not the server's.
    public static func hostStealMilliseconds() -> UInt64 {
        guard let text = readText("/proc/stat"), let line = text.split(separator: "\n").first else { return 0 }
        // cpu user nice system idle iowait irq softirq steal ...
        let fields = line.split(separator: " ")
        guard fields.count > 8, fields[0] == "cpu", let steal = UInt64(fields[8]) else { return 0 }
        return steal * 1000 / UInt64(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The number of threads `pid` runs now.
    public static func threads(pid: pid_t) -> Int {
        guard let text = readText("/proc/\(pid)/status") else { return 0 }
        for line in text.split(separator: "\n") where line.hasPrefix("Threads:") {
            return Int(line.split(whereSeparator: { $0 == " " || $0 == "\t" }).last ?? "") ?? 0
        }
        return 0
    }

    /// The direct children of `pid` (nginx's workers).
    public static func children(of pid: pid_t) -> [pid_t] {
        guard let text = readText("/proc/\(pid)/task/\(pid)/children") else { return [] }
        return text.split(separator: " ").compactMap { pid_t($0) }
    }
}
