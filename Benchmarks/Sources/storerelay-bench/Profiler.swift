import BenchKit
#if canImport(Glibc)
import Glibc
#endif

/// `perf record` attached to the gateway for one measured phase (`--perf`), then the top of a
/// flat `perf report`, so every hot-spot claim in the README comes with its evidence.
final class Profiler {
    private let process: ChildProcess
    private let output: String
    private let name: String

    /// Nil when profiling is off or perf is missing (said once).
    static func attach(to pid: pid_t, name: String, context: BenchContext) -> Profiler? {
        guard context.profile else { return nil }
        guard let perf = Files.which("perf") else {
            Report.line("perf not installed: no profile (apt-get install -y linux-perf)")
            return nil
        }
        let output = context.work + "/perf-\(name).data"
        guard let process = try? ChildProcess([perf, "record", "-F", "999", "-g", "-p", "\(pid)", "-o", output],
                                              stderr: output + ".log") else { return nil }
        // perf needs a moment to attach before the phase starts.
        usleep(300_000)
        return Profiler(process: process, output: output, name: name)
    }

    private init(process: ChildProcess, output: String, name: String) {
        self.process = process
        self.output = output
        self.name = name
    }

    /// Stops recording and prints the hottest symbols (self time) and the shared objects
    /// they live in, demangled when `swift demangle` is there.
    func finish(top: Int = 20) {
        process.stop(signal: SIGINT, timeout: 30)
        let report = output + ".txt"
        let demangle = Files.which("swift") != nil ? " | swift demangle --simplified" : ""
        let script = """
            perf report -i '\(output)' --stdio --no-children -g none --sort dso 2>/dev/null | grep -v '^#' | grep -v '^$' | head -8 > '\(report)'
            echo >> '\(report)'
            perf report -i '\(output)' --stdio --no-children -g none --sort dso,symbol --percent-limit 0.5 2>/dev/null \
                | grep -v '^#' | grep -v '^$' | sed 's/ *$//' \(demangle) >> '\(report)'
            """
        let reporter = try? ChildProcess(["/bin/sh", "-c", script], stderr: report + ".err")
        _ = reporter?.wait()
        let lines = (readText(report) ?? "").split(separator: "\n", omittingEmptySubsequences: false)
        Report.line("   perf profile of the gateway (\(name); by shared object, then hottest symbols by self time; \(report)):")
        for line in lines.prefix(top + 9) where !line.isEmpty {
            Report.line("     " + String(line.drop { $0 == " " }.prefix(150)))
        }
    }
}
