import BenchKit

/// Issue 31, point 3: this build against an earlier one (`--base-binary`, built by run.sh
/// from `--base COMMIT`), in one run on one host, rounds alternating so the host's drift
/// falls on both alike: the acceptance phase's saturation (closed loop, `--connections`,
/// distinct Apple-shaped bodies, file-queue route) and a fixed 1,000/s, each gateway fresh.
struct SideBySideBenchmark {
    let context: BenchContext
    let baseBinary: String
    let rounds: Int

    struct Round {
        var rate: Double
        var microseconds: Double
        var p99: Double
        var failed: Int
    }

    func run() throws {
        Report.section("Side by side: this build against \(baseBinary), \(rounds) alternating rounds, \(context.connections) connections, \(Format.fixed(context.seconds, 0)) s each")
        var base: [Round] = []
        var this: [Round] = []
        // Distinct bodies for a whole phase: grown after each phase to 1.4× what it took.
        var corpusSize = Int(4_000 * context.seconds)
        for round in 1...rounds {
            // Odd rounds start with the base, even ones with this build.
            let order = round % 2 == 1 ? [(true, baseBinary), (false, context.binary)] : [(false, context.binary), (true, baseBinary)]
            for (isBase, binary) in order {
                let result = try measure(binary: binary, label: "\(isBase ? "base" : "this")-\(round)", corpusSize: corpusSize)
                corpusSize = max(corpusSize, Int(result.rate * 1.4 * context.seconds))
                Report.line("round \(round) \(isBase ? "base" : "this"): \(Format.rate(result.rate)), \(Format.fixed(result.microseconds, 0)) µs CPU per notification, p99 at 1,000/s \(Format.ms(result.p99)), \(result.failed) failed")
                if isBase { base.append(result) } else { this.append(result) }
            }
        }
        let rateRatio = median(this.map(\.rate)) / median(base.map(\.rate))
        let cpuRatio = median(base.map(\.microseconds)) / median(this.map(\.microseconds))
        Report.line("medians: base \(Format.rate(median(base.map(\.rate)))) at \(Format.fixed(median(base.map(\.microseconds)), 0)) µs, this \(Format.rate(median(this.map(\.rate)))) at \(Format.fixed(median(this.map(\.microseconds)), 0)) µs")
        Report.line("ratio this ÷ base: accepted/s \(Format.fixed(rateRatio, 2))×, CPU per notification \(Format.fixed(1 / cpuRatio, 2))× (\(Format.fixed(cpuRatio, 2))× as many notifications per CPU second)")
        Report.line("   per round (this ÷ base, same round): \(zip(this, base).map { Format.fixed($0.rate / $1.rate, 2) + "×" }.joined(separator: ", "))")
        Report.check(this.allSatisfy { $0.failed == 0 } && base.allSatisfy { $0.failed == 0 } ? rateRatio > 1 : false,
                     "side by side: this build accepts more per second than the base (median ratio \(Format.fixed(rateRatio, 2))×)")
    }

    private func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

    /// One gateway of `binary`, fresh: warm-up, 1,000/s paced, then saturation.
    private func measure(binary: String, label: String, corpusSize: Int) throws -> Round {
        let gateway = try GatewayRunner(binary: binary, directory: context.work + "/side-by-side/" + label, trustRoot: context.trustRoot,
                                        destinations: [.file(name: "queue", directory: context.work + "/side-by-side/" + label + "/queue")])
        defer { gateway.stop() }
        let observed = Observed(gateway.process)
        context.wait(seconds: 1)
        try context.warmUp(gateway, observed: observed, label: label + " ")
        let paced = try context.corpus(Int(AcceptanceBenchmark.fixedRate * context.seconds) + 10)
        let pacedRun = try LoadRun.run(loop: context.loop, port: gateway.port, requests: paced.requests,
                                       connections: BenchContext.pacedConnections, pace: .fixedRate(perSecond: AcceptanceBenchmark.fixedRate),
                                       seconds: context.seconds, server: observed)
        let corpus = try context.corpus(corpusSize)
        let run = try LoadRun.run(loop: context.loop, port: gateway.port, requests: corpus.requests,
                                  connections: context.connections, pace: .closedLoop, seconds: context.seconds, server: observed)
        if run.result.exhausted { Report.line("   \(label): the corpus ran out early (\(corpusSize) bodies); the rate is a floor") }
        return Round(rate: run.result.throughput, microseconds: run.serverMicrosecondsPerRequest,
                     p99: pacedRun.result.latencies.ms(0.99), failed: run.result.failed + pacedRun.result.failed)
    }
}
