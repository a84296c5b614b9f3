import BenchKit

/// Issue "Fan out": notifications POSTed to the gateway until their normalized events reach
/// the downstreams: 1 webhook, 4 webhooks (all on the harness's sink, told apart by path), and
/// a file queue (lines seen appearing through inotify). Latency runs from the POST's due time
/// to the downstream's receipt, so it includes verification, the journal's fsync, the
/// delivery queue, the webhook request (or the queue's append) and the harness's reaction.
struct FanoutBenchmark {
    let context: BenchContext
    static let fixedRate = 500.0

    /// Where deliveries are observed: `(destination, event id, time)` per receipt.
    struct Downstream {
        let count: () -> Int
        let receipts: (_ from: Int) -> [(destination: Int, id: String, at: UInt64)]
        let stop: () -> Void
    }

    func run() throws {
        Report.section("Fan-out: POST -> gateway -> downstream receipt (fixed \(Format.rate(Self.fixedRate)), then saturation)")
        for (title, destinations, file) in [("1 webhook", 1, false), ("4 webhooks", 4, false), ("file queue", 1, true)]
        where context.scenarios.isEmpty || context.scenarios.contains(title) {
            try scenario(title, destinations: destinations, file: file)
        }
    }

    private func scenario(_ title: String, destinations: Int, file: Bool) throws {
        let name = "fanout-" + title.replacingOccurrences(of: " ", with: "-")
        let gateway: GatewayRunner
        let downstream: Downstream
        if file {
            let queue = context.work + "/" + name + "-queue"
            try Files.recreateDirectory(queue)
            gateway = try context.startGateway(name, [.file(name: "queue", directory: queue)])
            let watcher = try FileQueueWatcher(loop: context.loop, directory: queue)
            downstream = Downstream(
                count: { watcher.receipts.count },
                receipts: { from in watcher.receipts[from...].map { (0, $0.id, $0.at) } },
                stop: { watcher.stop() })
        } else {
            let sink = try WebhookSink(loop: context.loop, destinations: destinations)
            gateway = try context.startGateway(name, (0..<destinations).map {
                .webhook(name: "d\($0)", port: sink.port, path: sink.path($0))
            })
            downstream = Downstream(
                count: { sink.receipts.count },
                receipts: { from in sink.receipts[from...].map { ($0.destination, $0.id, $0.at) } },
                stop: { sink.stop() })
        }
        defer {
            gateway.stop()
            downstream.stop()
        }
        let observed = Observed(gateway.process)
        let idle = gateway.process.memory().rss

        // Warm-up: chain cache, webhook connection pools, queue segment; not measured.
        let warm = try context.corpus(100)
        _ = try LoadRun.run(loop: context.loop, port: gateway.port, requests: warm.requests, connections: 8,
                            pace: .closedLoop, seconds: 10, server: observed)
        context.wait(seconds: 15) { downstream.count() >= 100 * destinations }
        guard downstream.count() >= 100 * destinations else {
            throw BenchError("\(title): only \(downstream.count()) of \(100 * destinations) warm-up deliveries arrived\n\(gateway.logTail)")
        }

        // Fixed rate: the latency of a delivery at a load the gateway sustains.
        let pacedCorpus = try context.corpus(Int(Self.fixedRate * context.seconds) + 10)
        var mark = downstream.count()
        let paced = try LoadRun.run(loop: context.loop, port: gateway.port, requests: pacedCorpus.requests,
                                    connections: BenchContext.pacedConnections, pace: .fixedRate(perSecond: Self.fixedRate),
                                    seconds: context.seconds, server: observed)
        let pacedExpected = (paced.result.ok) * destinations
        context.wait(seconds: 30) { downstream.count() - mark >= pacedExpected }
        let pacedDelivery = Delivery(corpus: pacedCorpus, load: paced.result, receipts: downstream.receipts(mark), destinations: destinations)
        Report.line("\(title), fixed \(Format.rate(Self.fixedRate)): acks \(paced.result.latencies.text)")
        Report.line("   delivered \(pacedDelivery.delivered)/\(pacedExpected); POST -> receipt \(pacedDelivery.perDelivery.text)")
        if destinations > 1 {
            Report.line("   POST -> all \(destinations) received \(pacedDelivery.allReceived.text)")
        }
        Report.line("   \(paced.cpuText); RSS idle \(Format.mib(kilobytes: idle)), after \(Format.mib(kilobytes: gateway.process.memory().rss))")
        if pacedDelivery.delivered < pacedExpected { Report.line("   INCOMPLETE; the gateway's metrics: \(gateway.deliveryReport())") }

        // Saturation: how many deliveries per second the gateway completes while accepting flat
        // out; repeated to see whether memory comes back.
        var peak = 0
        for round in 1...max(1, context.fanoutRounds) where context.fanoutRounds > 0 {
            // More than the gateway accepts in the time (up to ~7,000/s on this machine): a
            // corpus that runs out ends the load early and understates the rate.
            let saturationCorpus = try context.corpus(Int(9_000 * context.seconds))
            mark = downstream.count()
            let profiler = round == 1 ? Profiler.attach(to: gateway.process.pid, name: name, context: context) : nil
            let saturated = try LoadRun.run(loop: context.loop, port: gateway.port, requests: saturationCorpus.requests,
                                            connections: context.connections, pace: .closedLoop, seconds: context.seconds,
                                            server: observed)
            let atEndOfLoad = downstream.count() - mark
            let expected = saturated.result.ok * destinations
            context.wait(seconds: 60) { downstream.count() - mark >= expected }
            let delivery = Delivery(corpus: saturationCorpus, load: saturated.result, receipts: downstream.receipts(mark), destinations: destinations)
            Report.line("\(title), saturation #\(round): accepted \(saturated.result.ok) at \(Format.rate(saturated.result.throughput)) (\(saturated.result.failed) failed)"
                        + (saturated.result.exhausted ? " [corpus ran out early]" : ""))
            Report.line("   delivered \(delivery.delivered)/\(expected) at \(Format.rate(delivery.deliveriesPerSecond)) deliveries = \(Format.rate(delivery.deliveriesPerSecond / Double(destinations))) notifications fully fanned out; backlog when the load stopped: \(expected - atEndOfLoad)")
            Report.line("   POST -> receipt \(delivery.perDelivery.text)")
            if delivery.delivered < expected { Report.line("   INCOMPLETE; the gateway's metrics: \(gateway.deliveryReport())") }
            let drained = gateway.process.memory().rss
            context.wait(seconds: 3)
            Report.line("   \(saturated.cpuText); RSS idle \(Format.mib(kilobytes: idle)), peak \(Format.mib(kilobytes: saturated.peakRSS)), drained \(Format.mib(kilobytes: drained)), 3 s later \(Format.mib(kilobytes: gateway.process.memory().rss))")
            profiler?.finish()
            peak = max(peak, saturated.peakRSS)
        }
        if context.fanoutRounds > 0 {
            Report.check(peak < 256 * 1024, "RSS < 256 MiB at saturation, \(title) (highest peak over \(context.fanoutRounds) rounds \(Format.mib(kilobytes: peak)))")
        }
    }
}

/// Deliveries of one run matched to the requests that caused them.
struct Delivery {
    let delivered: Int
    let perDelivery: LatencySummary
    let allReceived: LatencySummary
    let deliveriesPerSecond: Double

    init(corpus: Corpus, load: LoadResult, receipts: [(destination: Int, id: String, at: UInt64)], destinations: Int) {
        var seen = Set<Int>()
        var latencies: [UInt64] = []
        var last: [Int: UInt64] = [:]
        var count: [Int: Int] = [:]
        var end: UInt64 = 0
        for receipt in receipts {
            guard let index = corpus.indexByID[receipt.id], load.sendTimes[index] != 0 else { continue }
            // At-least-once: a repeated delivery counts once, at its first arrival.
            guard seen.insert(index * 8 + receipt.destination).inserted else { continue }
            latencies.append(receipt.at - load.sendTimes[index])
            last[index] = max(last[index] ?? 0, receipt.at)
            count[index, default: 0] += 1
            end = max(end, receipt.at)
        }
        delivered = latencies.count
        perDelivery = LatencySummary(latencies)
        allReceived = LatencySummary(last.compactMap { index, at in
            count[index] == destinations ? at - load.sendTimes[index] : nil
        })
        deliveriesPerSecond = end > load.start ? Double(delivered) / (Double(end - load.start) / 1e9) : 0
    }
}
