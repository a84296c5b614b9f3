import BenchKit

/// One load-generator run on the harness's event loop, with the gateway observed alongside:
/// its peak RSS sampled every 50 ms, and the CPU time it and the harness spent.
struct LoadRun {
    let result: LoadResult
    /// Highest VmRSS seen during the run, KiB (0 without a process to watch).
    let peakRSS: Int
    /// Most threads seen in the server during the run.
    let peakThreads: Int
    /// CPU consumed during the run, nanoseconds.
    let serverCPU: UInt64
    let harnessCPU: UInt64
    /// CPU time the host took from this machine during the run, milliseconds (both CPUs).
    let hostSteal: UInt64

    /// Server CPU per acknowledged request, microseconds.
    var serverMicrosecondsPerRequest: Double {
        let done = result.ok + result.duplicates
        return done == 0 ? .nan : Double(serverCPU) / 1e3 / Double(done)
    }

    static func run(
        loop: EventLoop, port: UInt16, requests: [[UInt8]], connections: Int,
        pace: LoadGenerator.Pace, seconds: Double, server: Observed?,
        classify: @escaping (Int, ArraySlice<UInt8>) -> LoadGenerator.Outcome = LoadRun.gatewayOutcome
    ) throws -> LoadRun {
        let generator = LoadGenerator(
            loop: loop, port: port, requests: requests, connections: connections, pace: pace,
            duration: seconds, classify: classify)
        var peak = 0
        var threads = 0
        let sampler = try server.map { server in
            try Ticker(loop: loop, interval: 50_000_000) { _ in
                peak = max(peak, server.rss())
                threads = max(threads, server.threads())
            }
        }
        let serverCPU = server?.cpuNanoseconds() ?? 0
        let harnessCPU = Monotonic.processCPUNanoseconds()
        let steal = ProcessStats.hostStealMilliseconds()
        try generator.start()
        // Answers still owed after the time is up get 30 s more, then count as unanswered.
        let deadline = Monotonic.nanoseconds() + UInt64((seconds + 30) * 1e9)
        loop.run(until: deadline) { generator.isDone }
        let result = generator.finish()
        sampler?.stop()
        if let server { peak = max(peak, server.rss()) }
        return LoadRun(
            result: result, peakRSS: peak, peakThreads: threads,
            serverCPU: (server?.cpuNanoseconds() ?? 0) - serverCPU,
            harnessCPU: Monotonic.processCPUNanoseconds() - harnessCPU,
            hostSteal: max(ProcessStats.hostStealMilliseconds(), steal) - steal)
    }

    /// The gateway's answers: 200 `accepted` or `duplicate`, anything else a failure.
    static func gatewayOutcome(_ status: Int, _ body: ArraySlice<UInt8>) -> LoadGenerator.Outcome {
        guard status == 200 else { return .failed }
        if contains(body, "\"accepted\"") { return .ok }
        if contains(body, "\"duplicate\"") { return .duplicate }
        return .failed
    }

    /// Any 200 (baselines: the sink, nginx).
    static func anyOK(_ status: Int, _ body: ArraySlice<UInt8>) -> LoadGenerator.Outcome {
        status == 200 ? .ok : .failed
    }

    private static func contains(_ body: ArraySlice<UInt8>, _ needle: String) -> Bool {
        let pattern = Array(needle.utf8)
        guard body.count >= pattern.count else { return false }
        var index = body.startIndex
        while index <= body.endIndex - pattern.count {
            if body[index..<(index + pattern.count)].elementsEqual(pattern) { return true }
            index += 1
        }
        return false
    }

    /// `12345 ok, 0 failed (200×12345), 4567/s, p50 ... | gateway 123 µs CPU/req, harness 45% of a core`.
    var text: String {
        var line = "\(result.ok) ok"
        if result.duplicates > 0 { line += ", \(result.duplicates) duplicate" }
        line += ", \(result.failed) failed (\(result.statusText))"
        if result.unanswered > 0 { line += ", \(result.unanswered) UNANSWERED" }
        if result.exhausted { line += " [corpus ran out early]" }
        line += "; \(Format.rate(result.throughput)); " + result.latencies.text
        return line
    }

    var cpuText: String {
        let wall = Double(result.end - result.start) / 1e9
        var line = ""
        if serverCPU > 0 {
            line += "server CPU \(Format.fixed(serverMicrosecondsPerRequest, 0)) µs/request (\(Format.fixed(Double(serverCPU) / 1e9 / wall * 100, 0))% of one core)"
            if peakThreads > 0 { line += ", up to \(peakThreads) threads" }
        }
        line += (line.isEmpty ? "" : ", ") + "harness \(Format.fixed(Double(harnessCPU) / 1e9 / wall * 100, 0))% of one core"
        line += ", host steal \(hostSteal) ms"
        return line
    }
}

/// How to watch the server under test: its CPU time so far and its resident memory (KiB).
struct Observed {
    let cpuNanoseconds: () -> UInt64
    let rss: () -> Int
    let threads: () -> Int

    init(cpuNanoseconds: @escaping () -> UInt64, rss: @escaping () -> Int, threads: @escaping () -> Int = { 0 }) {
        self.cpuNanoseconds = cpuNanoseconds
        self.rss = rss
        self.threads = threads
    }

    init(_ process: ChildProcess) {
        let pid = process.pid
        self.init(cpuNanoseconds: { process.cpuNanoseconds() }, rss: { process.memory().rss },
                  threads: { ProcessStats.threads(pid: pid) })
    }
}
