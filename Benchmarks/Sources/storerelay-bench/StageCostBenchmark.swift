import BenchKit
#if canImport(Glibc)
import Glibc
#endif

/// Issue 31, point 1: what each stage of acceptance costs, in µs of CPU per notification,
/// measured in one run (`--only stages`, or `Benchmarks/stage-costs.sh`).
///
/// One saturation phase of the acceptance benchmark (closed loop, `--connections`, unique
/// Apple-shaped bodies, a file-queue route) with `perf record --call-graph dwarf` attached to
/// the gateway, and the gateway's CPU time (/proc/PID/stat, user + system, every thread) read
/// before the load and after the file queue has drained. `Benchmarks/stage-attribution.sh` then gives every
/// perf sample to one stage (its innermost frame that a stage rule names) and turns each
/// stage's share of the samples into µs: share × CPU time ÷ notifications accepted.
/// The crypto ceiling (`openssl speed -multi 2 ecdsap256` verify/s ÷ 3) is measured in the
/// same run, just before the phase, with the gateway idle.
struct StageCostBenchmark {
    let context: BenchContext
    /// `openssl speed` (one process) verify/s at the start of the run: 1e6 ÷ it is the CPU
    /// cost of one ES256 check by OpenSSL's own loop.
    let singleCoreVerifications: Double
    /// ES256 checks per notification: 1 by default (nested JWS covered), 3 with `--verify-nested yes`.
    var checksPerNotification: Double = 1

    /// perf's sampling rate: twice the `--perf` profile's, for ~2 x 2,000 samples per second.
    static let frequency = 1999
    /// Seconds after the load for the file-queue destination to catch up (fan-out is
    /// asynchronous: an acknowledged event can still be on its way when the load stops); then
    /// up to 10 s more while the gateway's metrics still show deliveries waiting.
    static let drainSeconds = 2.0

    func run() throws {
        Report.section("Stage costs: perf record --call-graph dwarf at saturation, file-queue route (issue 31)")
        let queue = context.work + "/stages/queue"
        let gateway = try context.startGateway("stages", [.file(name: "queue", directory: queue)])
        defer { gateway.stop() }
        let observed = Observed(gateway.process)
        context.wait(seconds: 1)
        try context.warmUp(gateway, observed: observed)

        let ceiling = try OpenSSLSpeed.measure(seconds: 3, processes: 2, scratch: context.work).verificationsPerSecond / 3
        let corpus = try context.corpus(Int(ceiling * 1.3 * context.seconds))
        Report.line("corpus: \(corpus.requests.count) notifications, \(corpus.meanBodyBytes) bytes per body; crypto ceiling just before: \(Format.rate(ceiling))")

        guard let perf = Files.which("perf") else { throw BenchError("perf is not installed (apt-get install -y linux-perf)") }
        let data = context.work + "/perf-stages.data"
        // DWARF unwinding (.eh_frame), not frame pointers: Debian's libcrypto and libc are built
        // without them and libcrypto is stripped, so with `-g` a sample inside OpenSSL loses
        // its callers (an ECDSA check and a SHA-256 block look alike: `[unknown]`).
        let recorder = try ChildProcess([perf, "record", "-F", "\(Self.frequency)", "--call-graph", "dwarf", "-p", "\(gateway.process.pid)", "-o", data],
                                        stderr: data + ".log")
        usleep(300_000)
        let cpuBefore = gateway.process.cpuNanoseconds()
        let run = try LoadRun.run(loop: context.loop, port: gateway.port, requests: corpus.requests,
                                  connections: context.connections, pace: .closedLoop, seconds: context.seconds, server: observed)
        context.wait(seconds: Self.drainSeconds)
        var waiting = Self.deliveriesWaiting(gateway)
        let patience = Monotonic.nanoseconds() + 10_000_000_000
        while let count = waiting, count > 0, Monotonic.nanoseconds() < patience {
            context.wait(seconds: 0.2)
            waiting = Self.deliveriesWaiting(gateway)
        }
        let cpuAfter = gateway.process.cpuNanoseconds()
        recorder.stop(signal: SIGINT, timeout: 30)

        let accepted = run.result.ok + run.result.duplicates
        guard accepted > 0 else { throw BenchError("no notification accepted: \(run.text)") }
        let perNotification = Double(cpuAfter - cpuBefore) / 1e3 / Double(accepted)
        Report.line("saturation, \(context.connections) connections, \(Format.fixed(context.seconds, 0)) s: \(run.text)")
        Report.line("   \(run.cpuText)")
        Report.line("deliveries still waiting or in flight when the CPU time was read: \(waiting.map { String($0) } ?? "unknown (no /metrics)")")
        Report.line("gateway CPU (/proc/PID/stat utime+stime) from the load's start until the file queue drained: \(Format.fixed(Double(cpuAfter - cpuBefore) / 1e6, 0)) ms for \(accepted) accepted = \(Format.fixed(perNotification, 1)) µs per notification (with perf attached)")
        let ratio = run.result.throughput / ceiling
        Report.line("accepted/s \(Format.rate(run.result.throughput)) vs crypto ceiling (openssl speed -multi 2 ecdsap256 verify/s ÷ 3) \(Format.rate(ceiling)) = \(Format.fixed(ratio * 100, 0))%")
        Report.line("one ES256 check by openssl speed (one process, start of the run): \(Format.fixed(1e6 / singleCoreVerifications, 1)) µs; three: \(Format.fixed(3e6 / singleCoreVerifications, 1)) µs; this gateway makes \(Int(checksPerNotification)) per notification")

        // Benchmarks/stage-attribution.sh, beside run.sh.
        let script = String(#filePath.split(separator: "/", omittingEmptySubsequences: false).dropLast(3).joined(separator: "/")) + "/stage-attribution.sh"
        let table = context.work + "/stage-costs.txt"
        let attribution = try ChildProcess(["/bin/sh", script, data, String(perNotification), String(accepted)],
                                           stdout: table, stderr: table + ".err")
        guard attribution.wait() == 0 else {
            throw BenchError("stage-attribution.sh failed: \(readText(table + ".err") ?? "")")
        }
        Report.line("per-stage cost (perf samples by stage × CPU per notification; \(table), perf data \(data)):")
        for line in (readText(table) ?? "").split(separator: "\n") {
            Report.line("   " + line)
        }
    }

    /// Deliveries waiting or in flight, from the gateway's /metrics (`storerelay_queue_depth`
    /// and `storerelay_in_flight`, every destination); nil when it does not answer.
    private static func deliveriesWaiting(_ gateway: GatewayRunner) -> Int? {
        guard let text = BlockingHTTP.getText(port: gateway.adminPort, path: "/metrics") else { return nil }
        var total = 0.0
        for line in text.split(separator: "\n")
        where line.hasPrefix("storerelay_queue_depth{") || line.hasPrefix("storerelay_in_flight{") {
            total += line.split(separator: " ").last.flatMap { Double($0) } ?? 0
        }
        return Int(total)
    }
}
