import BenchKit

/// Issue "Prove it": verified + journaled V2 notifications of realistic size, over many
/// keep-alive connections, chain cache warm; at 1,000/s and at saturation; memory idle, under
/// load and after load across repeated runs; with the harness's own ceiling and nginx as
/// baselines in the same run.
struct AcceptanceBenchmark {
    let context: BenchContext
    /// `openssl speed -multi 2` verify/s ÷ 3: three ES256 verifications per notification.
    let cryptoCeiling: Double
    /// `openssl speed` verify/s on one core: the CPU cost of one ES256 check is its inverse.
    let singleCoreVerifications: Double
    /// ES256 checks the gateway makes per notification of the corpus (DID_RENEW with a
    /// transaction and renewal info): 1 by default, whose nested JWS share its header; 3 with
    /// `verify-nested yes`. The target stays the issue's (÷ 3); the ÷ 1 share is printed too.
    var checksPerNotification: Double = 1

    static let fixedRate = 1_000.0
    /// Saturation rounds; the ratio to the crypto ceiling is judged on their median, so one
    /// round caught by a busy spell of the host does not decide it.
    static let repeats = 5

    func run() throws {
        Report.section("Acceptance: POST -> verified (\(Int(checksPerNotification)) x ES256\(checksPerNotification == 1 ? ", nested JWS covered by the outer signature" : ", verify-nested yes")) + fsync'ed journal -> 200, file-queue destination")
        let gateway = try context.startGateway("acceptance", [.file(name: "queue", directory: context.work + "/acceptance/queue")])
        defer { gateway.stop() }
        let observed = Observed(gateway.process)
        context.wait(seconds: 1)
        let idle = gateway.process.memory().rss
        Report.line("gateway pid \(gateway.process.pid), \(ProcessStats.threads(pid: gateway.process.pid)) threads, RSS idle \(Format.mib(kilobytes: idle))")

        // Warm the chain cache and the connections' buffers; not measured.
        let warm = try context.warmUp(gateway, observed: observed)
        Report.line("corpus: \(warm.meanBodyBytes) bytes per body (Apple's real ones: 4-18 KB)")

        // 1,000/s offered, latency from each request's due time.
        let paced = try context.corpus(Int(Self.fixedRate * context.seconds) + 10)
        let pacedRun = try LoadRun.run(loop: context.loop, port: gateway.port, requests: paced.requests,
                                       connections: BenchContext.pacedConnections, pace: .fixedRate(perSecond: Self.fixedRate),
                                       seconds: context.seconds, server: observed)
        Report.line("fixed \(Format.rate(Self.fixedRate)), \(BenchContext.pacedConnections) connections: \(pacedRun.text)")
        Report.line("   \(pacedRun.cpuText), peak RSS \(Format.mib(kilobytes: pacedRun.peakRSS))")
        let p99 = pacedRun.result.latencies.ms(0.99)
        Report.check(pacedRun.result.failed == 0 && p99 < 10, "p99 acknowledgement < 10 ms at 1,000/s (p99 \(Format.ms(p99)))")

        try sweepConcurrency(gateway: gateway, observed: observed)

        // Saturation, repeated: fresh notifications each time (a repeat would be a cheap duplicate).
        // Each round is paired with a crypto ceiling measured just before it, the gateway idle:
        // this host's speed drifts by 15% and more over a minute, so a ratio against the
        // ceiling of the run's start measures the drift as much as the gateway.
        var corpusSize = Int(cryptoCeiling * 1.3 * context.seconds)
        var first: LoadRun?
        var peaks: [Int] = []
        var ratios: [Double] = []
        for round in 1...Self.repeats {
            let corpus = try context.corpus(corpusSize)
            let ceiling = try OpenSSLSpeed.measure(seconds: 3, processes: 2, scratch: context.work).verificationsPerSecond / 3
            let before = gateway.process.memory().rss
            let profiler = round == 1 ? Profiler.attach(to: gateway.process.pid, name: "acceptance", context: context) : nil
            let run = try LoadRun.run(loop: context.loop, port: gateway.port, requests: corpus.requests,
                                      connections: context.connections, pace: .closedLoop, seconds: context.seconds,
                                      server: observed)
            let after = gateway.process.memory().rss
            profiler?.finish()
            context.wait(seconds: 2)
            let settled = gateway.process.memory().rss
            Report.line("saturation #\(round), \(context.connections) connections: \(run.text)")
            Report.line("   \(run.cpuText); RSS before \(Format.mib(kilobytes: before)), peak \(Format.mib(kilobytes: run.peakRSS)), right after \(Format.mib(kilobytes: after)), 2 s later \(Format.mib(kilobytes: settled))")
            let ratio = run.result.throughput / ceiling
            ratios.append(ratio)
            Report.line("   crypto ceiling measured just before this round: \(Format.rate(ceiling)) -> \(Format.fixed(ratio * 100, 0))% of it")
            if first == nil { first = run }
            peaks.append(run.peakRSS)
            corpusSize = max(corpusSize, Int(run.result.throughput * 1.4 * context.seconds))
        }
        let saturation = first!
        let rate = saturation.result.throughput
        let medianRatio = ratios.sorted()[ratios.count / 2]
        Report.line("crypto ceiling (openssl speed -multi 2 ecdsap256 verify/s ÷ 3): \(Format.rate(cryptoCeiling)) at the start of the run; first round = \(Format.fixed(rate / cryptoCeiling * 100, 0))% of it")
        Report.line("   against the ceiling measured just before each round: \(ratios.map { Format.fixed($0 * 100, 0) + "%" }.joined(separator: ", ")); median \(Format.fixed(medianRatio * 100, 0))%")
        if checksPerNotification != 3 {
            // The work now done is one check per notification: the same rate against ÷ 1.
            let perCheck = medianRatio * checksPerNotification / 3
            Report.line("   against the ceiling of the checks made (verify/s ÷ \(Int(checksPerNotification))): median \(Format.fixed(perCheck * 100, 0))%")
        }
        // What the CPU cost per notification allows, whoever else shares the machine: the
        // gateway's CPU time per request is far less disturbed by other tenants than its rate.
        let cost = saturation.serverMicrosecondsPerRequest
        let crypto = checksPerNotification * 1e6 / singleCoreVerifications
        let three = 3e6 / singleCoreVerifications
        Report.line("CPU cost: \(Format.fixed(cost, 0)) µs per accepted notification -> two whole cores could accept at most \(Format.rate(2e6 / cost)) (3,000/s needs ≤ 667 µs)")
        Report.line("   its \(Int(checksPerNotification)) ES256 check(s) cost \(Format.fixed(crypto, 0)) µs (openssl speed, one core) = \(Format.fixed(crypto / cost * 100, 0))% of it; by CPU time the gateway runs at \(Format.fixed(three / cost * 100, 0))% of the ÷ 3 crypto ceiling")
        Report.check(saturation.result.failed == 0 && rate >= 3000, "≥ 3,000 accepted/s at saturation (\(Format.rate(rate)))")
        Report.check(medianRatio >= 0.5, "≥ half the crypto ceiling (median of the rounds \(Format.fixed(medianRatio * 100, 0))%, each against the ceiling measured just before it)")
        Report.check(idle < 64 * 1024, "RSS < 64 MiB idle (\(Format.mib(kilobytes: idle)))")
        let peak = peaks.max() ?? 0
        Report.check(peak < 256 * 1024, "RSS < 256 MiB at saturation (peak \(Format.mib(kilobytes: peak)), VmHWM \(Format.mib(kilobytes: gateway.process.memory().peak)))")

        // Baselines answer without looking: the same 2,000 bodies, cycled (copies share storage).
        let sample = try context.corpus(2_000).requests
        try baselines(requests: (0..<Int(60_000 * context.seconds)).map { sample[$0 % sample.count] })
    }

    /// Closed loop at rising concurrency, to show where saturation is: below it the gateway
    /// waits on round trips (its CPU idles between group commits) and every request pays for
    /// its own wake-ups; on the plateau the rate stops growing and only latency does. The
    /// saturation rounds run at `--connections`, which should sit on that plateau.
    private func sweepConcurrency(gateway: GatewayRunner, observed: Observed) throws {
        let seconds = min(3, context.seconds)
        Report.line("concurrency sweep (closed loop, \(Format.fixed(seconds, 0)) s each; the saturation rounds use \(context.connections)):")
        for connections in context.sweep {
            let corpus = try context.corpus(Int(cryptoCeiling * 1.3 * seconds))
            let run = try LoadRun.run(loop: context.loop, port: gateway.port, requests: corpus.requests,
                                      connections: connections, pace: .closedLoop, seconds: seconds, server: observed)
            Report.line("   \(connections) connections: \(Format.rate(run.result.throughput)), \(run.result.failed) failed; \(run.result.latencies.text)")
            Report.line("        \(run.cpuText)")
        }
    }

    /// The same requests, closed loop, answered by the harness's own sink (what the harness can
    /// drive on this machine) and by nginx `return 200`.
    private func baselines(requests: [[UInt8]]) throws {
        let sink = try WebhookSink(loop: context.loop, destinations: 0, answerBody: #"{"status":"accepted","id":"sink"}"#)
        let sinkRun = try LoadRun.run(loop: context.loop, port: sink.port, requests: requests, connections: context.connections,
                                      pace: .closedLoop, seconds: context.seconds, server: nil, classify: LoadRun.anyOK)
        sink.stop()
        Report.line("baseline, harness sink answering 200 (same thread as the load): \(sinkRun.text)")
        guard let nginx = try NginxBaseline.start(directory: context.work + "/nginx") else { return }
        defer { nginx.stop() }
        let nginxRun = try LoadRun.run(loop: context.loop, port: nginx.port, requests: requests, connections: context.connections,
                                       pace: .closedLoop, seconds: context.seconds, server: nginx.observed, classify: LoadRun.anyOK)
        Report.line("baseline, nginx return 200 (2 workers): \(nginxRun.text)")
        Report.line("   \(nginxRun.cpuText)")
    }
}
