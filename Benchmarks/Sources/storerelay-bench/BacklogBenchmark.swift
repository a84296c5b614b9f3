import BenchKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A backlog that should cost the same at a million (issue 15, point 4): N notifications are
/// accepted while the only webhook refuses connections; then RSS and data size are read,
/// the gateway is killed (`kill -9`) and started again, timed to `/readyz`; then the webhook
/// comes up (a sink, by a reload) and the drain is timed, with its RSS peak. Run for N and
/// 10·N in one go: the ratios show what grows with the backlog.
///
/// `paused` (issue 30, point 2): the same with the webhook up but its destination paused
/// (`storerelay destination pause`) before the load; nothing may arrive until the resume
/// after the restart, which the drain then times.
struct BacklogBenchmark {
    let context: BenchContext
    let counts: [Int]
    var paused = false

    struct Figures {
        var count: Int
        var acceptRate: Double
        var rssAccepted: Int
        var dataBytes: Int64
        var restartSeconds: Double
        var rssRestarted: Int
        var drainRate: Double
        var drainPeakRSS: Int
        var lost: Int
        /// Paused runs: what the sink received before the resume (must be 0).
        var deliveredWhilePaused = 0
    }

    /// The webhook's options: retries stay a few seconds apart, so the drain starts within
    /// seconds of the downstream coming back rather than at an hour's backoff; nothing gives
    /// up during the run.
    static let webhookOptions = ["max-attempts 100000", "max-age 7d", "backoff 1s 5s"]

    func run() throws {
        Report.section(paused
            ? "Backlog, paused: N accepted while the destination is paused, kill -9, restart, resume, drain"
            : "Backlog: N accepted while the webhook refuses connections, kill -9, restart, drain")
        var results: [Figures] = []
        for count in counts {
            let figures = try measure(count)
            results.append(figures)
            Report.line("   N = \(count): accepted at \(Format.rate(figures.acceptRate)), RSS \(Format.mib(kilobytes: figures.rssAccepted)), "
                + "data \(Format.mib(kilobytes: Int(figures.dataBytes / 1024)))")
            Report.line("      restart to ready \(Format.fixed(figures.restartSeconds, 2)) s, RSS after \(Format.mib(kilobytes: figures.rssRestarted)); "
                + "drain \(Format.rate(figures.drainRate)), RSS peak \(Format.mib(kilobytes: figures.drainPeakRSS)), lost \(figures.lost)")
        }
        guard let small = results.first, let large = results.last, large.count > small.count else { return }
        let ratio = { (a: Double, b: Double) in Format.fixed(b / max(a, 1e-9), 2) }
        Report.line("   N = \(large.count) vs \(small.count): RSS x\(ratio(Double(small.rssAccepted), Double(large.rssAccepted))), "
            + "restart x\(ratio(small.restartSeconds, large.restartSeconds)), RSS after restart x\(ratio(Double(small.rssRestarted), Double(large.rssRestarted))), "
            + "data x\(ratio(Double(small.dataBytes), Double(large.dataBytes)))")
        let mib = Double(large.rssAccepted) / 1024
        Report.check(mib < 128, "RSS < 128 MiB with \(large.count) parked (\(Format.fixed(mib, 1)) MiB)")
        Report.check(large.restartSeconds < 5, "restart to ready < 5 s with \(large.count) pending (\(Format.fixed(large.restartSeconds, 2)) s)")
        Report.check(large.drainRate >= large.acceptRate, "drain >= acceptance rate (\(Format.rate(large.drainRate)) vs \(Format.rate(large.acceptRate)))")
        Report.check(results.allSatisfy { $0.lost == 0 }, "0 lost")
        if paused {
            Report.check(results.allSatisfy { $0.deliveredWhilePaused == 0 }, "nothing delivered while paused, across kill -9 and restart")
        }
        Report.check(Double(large.rssAccepted) / Double(max(small.rssAccepted, 1)) < 1.5
                        && large.restartSeconds / max(small.restartSeconds, 1e-9) < 1.5,
                     "RSS and restart nearly flat from \(small.count) to \(large.count) (ratios < 1.5)")
    }

    private func measure(_ count: Int) throws -> Figures {
        let down = try Socket.freePort()
        let name = "backlog-\(paused ? "paused-" : "")\(count)"
        // Paused, the downstream is up from the start: only the pause keeps events from it.
        let sink = paused ? try WebhookSink(loop: context.loop, destinations: 1) : nil
        defer { sink?.stop() }
        let gateway = try context.startGateway(name, [.webhook(name: "hook", port: sink?.port ?? down, path: "/d0", options: Self.webhookOptions)])
        let config = gateway.directory + "/routes.conf"
        if paused { try destination("pause", config: config, binary: gateway.binary, log: gateway.logPath) }
        var ids = Set<String>()
        ids.reserveCapacity(count)

        // Accept, a batch at a time: a million signed bodies would not fit in memory at once.
        // The rate counts the load phases only, not the harness signing the next batch.
        var acceptNanoseconds: UInt64 = 0
        var accepted = 0
        while accepted < count {
            let batch = try context.corpus(min(20_000, count - accepted))
            ids.formUnion(batch.ids)
            let run = try LoadRun.run(loop: context.loop, port: gateway.port, requests: batch.requests, connections: 64,
                                      pace: .closedLoop, seconds: 600, server: Observed(gateway.process))
            guard run.result.ok == batch.requests.count else {
                throw BenchError("acceptance failed at \(accepted): \(run.text)\n\(run.result.firstFailure ?? "")\n\(gateway.logTail)")
            }
            accepted += batch.requests.count
            acceptNanoseconds += run.result.end - run.result.start
        }
        let acceptRate = Double(accepted) / (Double(acceptNanoseconds) / 1e9)
        context.wait(seconds: 3)
        let rssAccepted = gateway.process.memory().rss
        let dataBytes = Self.size(gateway.directory + "/data")

        // kill -9, then the same configuration and data again, timed to /readyz.
        _ = gateway.process.stop(signal: SIGKILL)
        let restartStarted = Monotonic.nanoseconds()
        let restarted = try ChildProcess([gateway.binary, "serve", "--config", config, "--log-level", "warning"],
                                         stderr: gateway.logPath + ".restart")
        defer { _ = restarted.stop(signal: SIGTERM, timeout: 30) }
        try BlockingHTTP.waitFor(port: gateway.port, path: "/readyz", timeout: 900, process: restarted)
        let restartSeconds = Double(Monotonic.nanoseconds() - restartStarted) / 1e9
        context.wait(seconds: 2)
        let rssRestarted = restarted.memory().rss

        let drain: WebhookSink
        var deliveredWhilePaused = 0
        let drainStarted: UInt64
        if let sink {
            // Still paused after the kill: nothing arrived. The resume starts the drain.
            deliveredWhilePaused = sink.receipts.count
            drainStarted = Monotonic.nanoseconds()
            try destination("resume", config: config, binary: gateway.binary, log: gateway.logPath)
            drain = sink
        } else {
            // The downstream comes back: a sink, which the webhook is pointed at by a reload.
            drain = try WebhookSink(loop: context.loop, destinations: 1)
            let text = readText(config) ?? ""
            try Files.write(config, text.replacingOccurrences(of: "http://127.0.0.1:\(down)/d0", with: "http://127.0.0.1:\(drain.port)/d0"))
            drainStarted = Monotonic.nanoseconds()
            kill(restarted.pid, SIGHUP)
        }
        defer { if sink == nil { drain.stop() } }
        var peak = 0
        var seen = Set<String>()
        var consumed = 0
        let sampler = try Ticker(loop: context.loop, interval: 100_000_000) { _ in peak = max(peak, restarted.memory().rss) }
        let deadline = Monotonic.nanoseconds() + UInt64(1800 * 1e9)
        context.loop.run(until: deadline) {
            while consumed < drain.receipts.count {
                seen.insert(drain.receipts[consumed].id)
                consumed += 1
            }
            return seen.count >= ids.count
        }
        sampler.stop()
        let drainSeconds = Double(Monotonic.nanoseconds() - drainStarted) / 1e9
        return Figures(count: count, acceptRate: acceptRate, rssAccepted: rssAccepted, dataBytes: dataBytes,
                       restartSeconds: restartSeconds, rssRestarted: rssRestarted,
                       drainRate: Double(seen.count) / drainSeconds, drainPeakRSS: peak, lost: ids.subtracting(seen).count,
                       deliveredWhilePaused: deliveredWhilePaused)
    }

    /// `storerelay destination pause|resume hook` against the running gateway, as an
    /// operator would.
    private func destination(_ action: String, config: String, binary: String, log: String) throws {
        let command = try ChildProcess([binary, "destination", action, "hook", "--config", config], stderr: log + "." + action)
        let status = command.wait()
        guard status == 0 else { throw BenchError("storerelay destination \(action) exited \(status): \(readText(log + "." + action) ?? "")") }
    }

    /// Bytes of every file under `path`.
    static func size(_ path: String) -> Int64 {
        guard let enumerator = FileManager.default.enumerator(atPath: path) else { return 0 }
        var total: Int64 = 0
        while let item = enumerator.nextObject() as? String {
            let attributes = try? FileManager.default.attributesOfItem(atPath: path + "/" + item)
            if attributes?[.type] as? FileAttributeType == .typeRegular { total += (attributes?[.size] as? Int64) ?? 0 }
        }
        return total
    }
}
