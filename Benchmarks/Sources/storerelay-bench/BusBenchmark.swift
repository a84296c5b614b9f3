import BenchKit
import Foundation

/// Issue 29, point 5: events delivered per second to each bus on this machine, beside webhook
/// delivery in the same run, and the gateway's acceptance with each bus destination against its
/// acceptance with a webhook ("delivery to a bus is not the bottleneck of acceptance").
///
/// Every scenario gets its own gateway with one destination, the same load as the fan-out
/// benchmark (a fixed 500/s, then closed-loop saturation rounds), and its own real broker,
/// started here on a free port in a fresh directory and stopped afterwards. The harness reads
/// each bus back as a consumer would, on its own event loop, so every event has a receipt
/// time and POST -> receipt latency is measured as for the webhook sink:
/// - `redis-stream`: `XREAD BLOCK` on the stream (`RedisStreamReader`); an entry is readable
///   once `XADD` stored it, the gateway's confirmation.
/// - `nats`: a JetStream push consumer on the stream (`NATSConnection`), so a message is
///   received after the stream stored it, not when the server merely routed the publish.
/// - `amqp` (`rabbitmq-server`): a pika consumer in Python (`BusReaderScripts`), which stamps
///   each message with the same monotonic clock and hands it to the harness over a pipe
///   (`LineReceiptReader`). Its CPU is printed beside the broker's: it shares the two cores.
/// - `sqs` (moto's server as the endpoint): count-based. moto's receive path costs ~8 ms per
///   message even on an idle core, so a consumer would measure moto; a boto3 watcher reads
///   the queue's own count every 200 ms instead, and delivered/s is taken from that count
///   over time. There is no per-event latency for this row.
/// The broker's own count (XLEN, the stream's `messages`, what a queue still holds) is
/// printed beside the reader's as a cross-check. The webhook baseline runs first and again
/// last; ratios are taken against the mean of the two, so a machine that got busier during the
/// run does not decide them alone.
///
/// A new bus kind is one case of `Bus` and one arm in `start(_:)`.
struct BusBenchmark {
    let context: BenchContext
    /// The buses to measure (`--buses`); all by default.
    let buses: [Bus]
    /// Lines added to every bus destination's block (`--bus-options "concurrency 16"`), to
    /// tell a destination's defaults from its broker's limits; none by default.
    var busOptions: [String] = []

    static let fixedRate = 500.0
    /// Both brokers' names for the gateway's destination: a stream key, a subject.
    static let redisStreamKey = "bench:events"
    static let natsSubject = "bench.events"
    /// RabbitMQ: the exchange the gateway publishes to, its routing key, and the queue bound to it.
    static let amqpExchange = "bench"
    static let amqpRoutingKey = "bench.events"
    static let amqpQueue = "bench.events"
    /// SQS on moto: a standard queue in moto's default account; moto takes any credentials.
    static let sqsQueue = "bench-events"
    static let sqsRegion = "us-east-1"
    static let sqsAccessKeyId = "AKIDEXAMPLE"
    static let sqsSecretAccessKey = "bench-secret-not-checked-by-moto"
    /// The broker script itself, as the tests run it: `/usr/sbin/rabbitmq-server` switches to
    /// the `rabbitmq` user, who cannot write the scratch directory.
    static let rabbitMQServer = "/usr/lib/rabbitmq/bin/rabbitmq-server"

    enum Bus: String, CaseIterable {
        case redisStream = "redis-stream"
        case nats
        case amqp
        case sqs
    }

    /// What one scenario measured (saturation figures are means over its rounds).
    struct Figures {
        var title: String
        var pacedDelivered = 0
        var pacedExpected = 0
        var pacedLatency: LatencySummary = LatencySummary([])
        var accepted = 0.0
        var delivered = 0.0
        var saturationLatency: LatencySummary = LatencySummary([])
        var backlog = 0
        var gatewayMicroseconds = 0.0
        var brokerMicroseconds: Double?
        /// The broker's CPU during the saturation rounds, in cores: taken from the same two
        /// cores the gateway verifies on, so it bounds what acceptance can keep here.
        var brokerCores: Double?
        var complete = true
        /// Delivered from the broker's count over time, not per-event receipts (no latency).
        var countBased = false
    }

    /// A destination and where its deliveries are observed, with its broker when it has one.
    struct Scenario {
        let title: String
        let destination: GatewayRunner.Destination
        let downstream: FanoutBenchmark.Downstream
        let broker: ChildProcess?
        /// The consumer, when it is a process of its own (its CPU is reported per event).
        var reader: ChildProcess? = nil
        /// For a count-based scenario: the broker's count of events held over time, polled.
        var counts: (() -> [(count: Int, at: UInt64)])? = nil
        /// The broker's own count of what it holds, in words, for the cross-check line.
        let brokerCount: () -> String?
        let stop: () -> Void
    }

    func run() throws {
        Report.section("Buses: POST -> gateway -> bus, read back by the harness (fixed \(Format.rate(Self.fixedRate)), then saturation), beside 1 webhook")
        let before = try measure(webhookScenario(), label: "1 webhook (before)")
        var results: [Figures] = []
        for bus in buses {
            guard let scenario = try start(bus) else { continue }
            defer { scenario.stop() }
            results.append(try measure(scenario, label: scenario.title))
        }
        let after = try measure(webhookScenario(), label: "1 webhook (after)")

        let baseAccepted = (before.accepted + after.accepted) / 2
        let baseDelivered = (before.delivered + after.delivered) / 2
        Report.line("")
        Report.line("webhook baseline: accepted \(Format.rate(before.accepted)) before, \(Format.rate(after.accepted)) after, mean \(Format.rate(baseAccepted)); "
            + "delivered \(Format.rate(before.delivered)) / \(Format.rate(after.delivered)), mean \(Format.rate(baseDelivered))")
        Report.line("| destination | accepted at saturation | ÷ webhook | delivered at saturation | ÷ webhook | delivered ÷ own accepted | backlog at end of load | POST -> receipt p50 / p99 at \(Int(Self.fixedRate))/s | at saturation | gateway CPU/notification | broker CPU/event (share of one core) |")
        Report.line("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for figures in [before] + results + [after] {
            let latency = { (summary: LatencySummary) in
                figures.countBased ? "— (count-based)" : "\(Format.ms(summary.ms(0.5))) / \(Format.ms(summary.ms(0.99)))"
            }
            Report.line("| \(figures.title)\(figures.countBased ? " (count-based)" : "") | \(Format.rate(figures.accepted)) | \(Format.fixed(figures.accepted / baseAccepted, 2)) | "
                + "\(Format.rate(figures.delivered)) | \(Format.fixed(figures.delivered / baseDelivered, 2)) | "
                + "\(Format.fixed(figures.delivered / figures.accepted, 2)) | \(figures.backlog) | "
                + "\(latency(figures.pacedLatency)) | \(latency(figures.saturationLatency)) | "
                + "\(Format.fixed(figures.gatewayMicroseconds, 0)) µs | \(figures.brokerMicroseconds.map { Format.fixed($0, 0) + " µs" } ?? "")\(figures.brokerCores.map { " (\(Format.fixed($0 * 100, 0))%)" } ?? "") |")
        }
        for figures in results {
            // Deliveries keep up when they end (nearly) with the load: the rate over the load
            // and its drain is then the acceptance rate. 20% of acceptance is this shared
            // machine's noise between two runs of the same gateway (see README's results).
            Report.check(figures.complete && figures.delivered >= 0.9 * figures.accepted,
                         "\(figures.title): every event delivered, at ≥ 90% of its own acceptance rate (\(Format.fixed(figures.delivered / figures.accepted * 100, 0))%)")
            Report.check(figures.accepted >= 0.8 * baseAccepted,
                         "\(figures.title): acceptance ≥ 80% of acceptance with a webhook in the same run (\(Format.fixed(figures.accepted / baseAccepted * 100, 0))%)")
        }
    }

    // MARK: Scenarios

    private func webhookScenario() throws -> Scenario {
        let sink = try WebhookSink(loop: context.loop, destinations: 1)
        return Scenario(
            title: "1 webhook", destination: .webhook(name: "d0", port: sink.port, path: sink.path(0)),
            downstream: FanoutBenchmark.Downstream(
                count: { sink.receipts.count },
                receipts: { from in sink.receipts[from...].map { (0, $0.id, $0.at) } },
                stop: { sink.stop() }),
            broker: nil, brokerCount: { nil }, stop: { sink.stop() })
    }

    /// Starts `bus`'s broker and reader; nil (with a line) when the broker is not installed.
    private func start(_ bus: Bus) throws -> Scenario? {
        switch bus {
        case .redisStream: try startRedis()
        case .nats: try startNATS()
        case .amqp: try startAMQP()
        case .sqs: try startSQS()
        }
    }

    /// `redis-server` as a team running a bus on it would: appendonly yes, appendfsync
    /// everysec (Redis's own recommendation for durability), no RDB snapshots.
    private func startRedis() throws -> Scenario? {
        guard let server = Files.which("redis-server"), let cli = Files.which("redis-cli") else {
            Report.line("skipped redis-stream: redis-server or redis-cli not installed (apt-get install -y redis-server)")
            return nil
        }
        let directory = try brokerDirectory("bus-redis-server")
        let port = try Socket.freePort()
        let process = try ChildProcess([server, "--port", String(port), "--bind", "127.0.0.1", "--dir", directory,
                                        "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--daemonize", "no"],
                                       stderr: directory + "/server.log")
        do {
            try waitForPort(port, process: process, log: directory + "/server.log")
            let reader = try RedisStreamReader(loop: context.loop, port: port, key: Self.redisStreamKey)
            let version = Self.output(server, ["--version"]).split(separator: " ").first { $0.hasPrefix("v=") }?.dropFirst(2) ?? "?"
            return Scenario(
                title: "redis-stream",
                destination: .other(name: "bus", kind: "redis-stream", url: "redis://127.0.0.1:\(port)/0",
                                    options: ["stream \(Self.redisStreamKey)"]),
                downstream: FanoutBenchmark.Downstream(
                    count: { reader.receipts.count },
                    receipts: { from in reader.receipts[from...].map { (0, $0.id, $0.at) } },
                    stop: { reader.stop() }),
                broker: process,
                brokerCount: {
                    Int(Self.output(cli, ["-p", String(port), "XLEN", Self.redisStreamKey]).trimmingCharacters(in: .whitespacesAndNewlines))
                        .map { "the broker holds \($0) events" }
                },
                stop: {
                    reader.stop()
                    process.stop(signal: SIGTERM, timeout: 10)
                    Report.line("   (redis-server \(version), appendonly yes, appendfsync everysec; reader: \(reader.failure ?? "no error"))")
                })
        } catch {
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// `nats-server -js` with its file store in a fresh directory (the server's defaults
    /// otherwise: the store syncs to disk every 2 minutes), one stream `BENCH` taking the
    /// gateway's subject, and an ephemeral push consumer delivering it to the harness.
    private func startNATS() throws -> Scenario? {
        guard let server = Files.which("nats-server") else {
            Report.line("skipped nats: nats-server not installed (see script/setup)")
            return nil
        }
        let directory = try brokerDirectory("bus-nats-server")
        let port = try Socket.freePort()
        let process = try ChildProcess([server, "-js", "-sd", directory + "/store", "-a", "127.0.0.1", "-p", String(port)],
                                       stderr: directory + "/server.log")
        do {
            try waitForPort(port, process: process, log: directory + "/server.log")
            let watch = try NATSWatch(loop: context.loop, port: port)
            try watch.request("$JS.API.STREAM.CREATE.BENCH",
                              #"{"name":"BENCH","subjects":["\#(Self.natsSubject)"],"storage":"file","retention":"limits","discard":"old"}"#,
                              context: context)
            watch.connection.subscribe("bench.receipts", sid: 1)
            try watch.request("$JS.API.CONSUMER.CREATE.BENCH",
                              #"{"stream_name":"BENCH","config":{"deliver_subject":"bench.receipts","deliver_policy":"all","ack_policy":"none","replay_policy":"instant"}}"#,
                              context: context)
            let version = Self.output(server, ["--version"]).trimmingCharacters(in: .whitespacesAndNewlines)
            return Scenario(
                title: "nats",
                destination: .other(name: "bus", kind: "nats", url: "nats://127.0.0.1:\(port)", options: ["subject \(Self.natsSubject)"]),
                downstream: FanoutBenchmark.Downstream(
                    count: { watch.receipts.count },
                    receipts: { from in watch.receipts[from...].map { (0, $0.id, $0.at) } },
                    stop: {}),
                broker: process,
                brokerCount: {
                    guard let info = try? watch.request("$JS.API.STREAM.INFO.BENCH", "", context: context),
                          let object = try? JSONSerialization.jsonObject(with: Data(info.utf8)) as? [String: Any],
                          let state = object["state"] as? [String: Any] else { return nil }
                    return (state["messages"] as? NSNumber).map { "the broker holds \($0.intValue) events" }
                },
                stop: {
                    watch.connection.stop()
                    process.stop(signal: SIGTERM, timeout: 10)
                    Report.line("   (\(version), JetStream file store; consumer: \(watch.connection.failure ?? "no error")"
                                + (watch.connection.errors.isEmpty ? "" : ", server errors: \(watch.connection.errors.prefix(3))") + ")")
                })
        } catch {
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// `rabbitmq-server` (Debian's package) as the tests start it: its own node name, ports,
    /// mnesia and log directories, HOME (its own Erlang cookie) and no plugins, in a fresh
    /// directory. `RABBITMQ_ALLOW_INPUT` makes the script exec the VM, so the process's pid is
    /// the broker's (its CPU is the VM's) and SIGTERM reaches it. The gateway publishes
    /// persistent messages to a durable topic exchange with publisher confirms; a durable
    /// classic queue is bound to it and a pika consumer reads it.
    private func startAMQP() throws -> Scenario? {
        guard FileManager.default.isExecutableFile(atPath: Self.rabbitMQServer), let python = Self.python(importing: "pika") else {
            Report.line("skipped amqp: rabbitmq-server or python3's pika not installed (see script/setup)")
            return nil
        }
        let directory = try brokerDirectory("bus-rabbitmq")
        for sub in ["mnesia", "log", "home"] {
            try FileManager.default.createDirectory(atPath: directory + "/" + sub, withIntermediateDirectories: true)
        }
        let port = try Socket.freePort()
        let distributionPort = try Socket.freePort()
        try "listeners.tcp.default = 127.0.0.1:\(port)\nloopback_users = none\n"
            .write(toFile: directory + "/rabbitmq.conf", atomically: true, encoding: .utf8)
        try "[].\n".write(toFile: directory + "/enabled_plugins", atomically: true, encoding: .utf8)
        let process = try ChildProcess(
            [Self.rabbitMQServer], stdout: directory + "/console.log", stderr: directory + "/console.err",
            environment: [
                "HOME": directory + "/home",
                "RABBITMQ_NODENAME": "storerelaybench\(port)@localhost",
                "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
                "RABBITMQ_NODE_PORT": String(port),
                "RABBITMQ_DIST_PORT": String(distributionPort),
                "RABBITMQ_MNESIA_BASE": directory + "/mnesia",
                "RABBITMQ_LOG_BASE": directory + "/log",
                "RABBITMQ_CONFIG_FILE": directory + "/rabbitmq.conf",
                "RABBITMQ_ENABLED_PLUGINS_FILE": directory + "/enabled_plugins",
                "RABBITMQ_PID_FILE": directory + "/rabbitmq.pid",
                "RABBITMQ_ALLOW_INPUT": "1",
                "RABBITMQ_SERVER_START_ARGS": "-noinput",
            ])
        var consumer: (process: ChildProcess, reader: LineReceiptReader)?
        do {
            // An Erlang node boots in seconds, longer on a busy machine.
            try waitForPort(port, process: process, log: directory + "/console.log", seconds: 90)
            let url = "amqp://guest:guest@127.0.0.1:\(port)/%2f"
            consumer = try startReader(python, script: BusReaderScripts.amqp,
                                       arguments: [url, Self.amqpExchange, Self.amqpQueue, Self.amqpRoutingKey],
                                       log: directory + "/reader.log", name: "the pika consumer")
            let (readerProcess, reader) = consumer!
            let version = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/rabbitmq/lib"))?
                .first { $0.hasPrefix("rabbitmq_server-") }?.dropFirst("rabbitmq_server-".count) ?? "?"
            return Scenario(
                title: "amqp",
                destination: .other(name: "bus", kind: "amqp", url: url,
                                    options: ["exchange \(Self.amqpExchange)", "routing-key \(Self.amqpRoutingKey)"]),
                downstream: FanoutBenchmark.Downstream(
                    count: { reader.receipts.count },
                    receipts: { from in reader.receipts[from...].map { (0, $0.id, $0.at) } },
                    stop: {}),
                broker: process,
                reader: readerProcess,
                brokerCount: {
                    Int(Self.output(python, ["-c", BusReaderScripts.amqpDepth, url, Self.amqpQueue])
                        .trimmingCharacters(in: .whitespacesAndNewlines))
                        .map { "the queue holds \($0) unconsumed messages (the consumer acknowledged the rest)" }
                },
                stop: {
                    readerProcess.stop(signal: SIGTERM, timeout: 5)
                    reader.stop()
                    process.stop(signal: SIGTERM, timeout: 30)
                    Report.line("   (rabbitmq-server \(version), durable classic queue, persistent messages, publisher confirms; "
                                + "consumer: \(reader.failure ?? "no error")\(reader.notes.isEmpty ? "" : ", said \(reader.notes.prefix(3))"))")
                })
        } catch {
            consumer?.process.stop(signal: SIGKILL)
            consumer?.reader.stop()
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// PyPI's moto server as the SQS endpoint (as the tests run it), a standard queue created
    /// by a boto3 watcher that polls the queue's count (count-based: moto's ReceiveMessage and
    /// DeleteMessageBatch cost ~8 ms per message on an idle core, so a consumer reading events
    /// back would measure moto's receive path, ~20 events/s beside a saturated gateway). moto
    /// is an emulator in Python: its CPU per event says nothing about SQS.
    private func startSQS() throws -> Scenario? {
        guard let python = Self.python(importing: "moto.server, boto3") else {
            Report.line("skipped sqs: python3's moto[server] or boto3 not installed (see script/setup)")
            return nil
        }
        let directory = try brokerDirectory("bus-moto")
        let port = try Socket.freePort()
        let process = try ChildProcess([python, "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)],
                                       stderr: directory + "/server.log")
        var consumer: (process: ChildProcess, reader: LineReceiptReader)?
        do {
            try waitForPort(port, process: process, log: directory + "/server.log", seconds: 30)
            let endpoint = "http://127.0.0.1:\(port)"
            let queueArguments = [endpoint, Self.sqsRegion, Self.sqsAccessKeyId, Self.sqsSecretAccessKey, Self.sqsQueue]
            consumer = try startReader(python, script: BusReaderScripts.sqsCount, arguments: queueArguments,
                                       log: directory + "/reader.log", name: "the boto3 queue watcher")
            let (readerProcess, reader) = consumer!
            let version = Self.output(python, ["-c", "import moto, boto3; print(moto.__version__, boto3.__version__)"])
                .trimmingCharacters(in: .whitespacesAndNewlines).split(separator: " ")
            return Scenario(
                title: "sqs",
                destination: .other(name: "bus", kind: "sqs", url: "https://sqs.\(Self.sqsRegion).amazonaws.com/123456789012/\(Self.sqsQueue)",
                                    options: ["endpoint \(endpoint)", "region \(Self.sqsRegion)",
                                              "access-key-id \(Self.sqsAccessKeyId)", "secret-access-key \(Self.sqsSecretAccessKey)"]),
                downstream: FanoutBenchmark.Downstream(
                    count: { reader.counts.last?.count ?? 0 },
                    receipts: { _ in [] },
                    stop: {}),
                broker: process,
                reader: readerProcess,
                counts: { reader.counts },
                brokerCount: { nil },
                stop: {
                    readerProcess.stop(signal: SIGTERM, timeout: 5)
                    reader.stop()
                    process.stop(signal: SIGTERM, timeout: 10)
                    Report.line("   (moto \(version.first ?? "?") server as SQS, standard queue; boto3 \(version.dropFirst().first ?? "?") watcher: "
                                + "\(reader.failure ?? "no error")\(reader.notes.isEmpty ? "" : ", said \(reader.notes.prefix(3))"))")
                })
        } catch {
            consumer?.process.stop(signal: SIGKILL)
            consumer?.reader.stop()
            process.stop(signal: SIGKILL)
            throw error
        }
    }

    /// Starts a Python consumer (`BusReaderScripts`) with its standard output on a pipe to the
    /// harness's loop, and waits (running the loop) up to 60 s for its `ready` line.
    private func startReader(_ python: String, script: String, arguments: [String], log: String,
                             name: String) throws -> (process: ChildProcess, reader: LineReceiptReader) {
        let reader = try LineReceiptReader(loop: context.loop)
        let process: ChildProcess
        do {
            process = try ChildProcess([python, "-c", script] + arguments, stdoutDescriptor: reader.writeEnd, stderr: log)
        } catch {
            reader.childStarted()
            reader.stop()
            throw error
        }
        reader.childStarted()
        context.wait(seconds: 60) { reader.ready || reader.closed }
        guard reader.ready else {
            process.stop(signal: SIGKILL)
            reader.stop()
            throw BenchError("\(name) did not start (\(reader.failure ?? "no ready line in 60 s")):\n\(readText(log)?.suffix(2000) ?? "")")
        }
        return (process, reader)
    }

    /// The Python interpreter itself (not a version manager's shim, so the pid we measure is
    /// Python's), if `python3` can import `modules`.
    static func python(importing modules: String) -> String? {
        guard let python3 = Files.which("python3") else { return nil }
        let path = output(python3, ["-c", "import sys, \(modules); print(sys.executable)"])
            .split(separator: "\n").last.map(String.init) ?? ""
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    // MARK: Measuring

    /// One scenario: a gateway with its destination, a warm-up, the fixed-rate phase and the
    /// saturation rounds (as the fan-out benchmark runs them), then the gateway is stopped.
    private func measure(_ scenario: Scenario, label: String) throws -> Figures {
        let name = "bus-" + label.filter { $0.isLetter || $0.isNumber || $0 == "-" }
        var destination = scenario.destination
        if case .other(let destinationName, let kind, let url, let options) = destination, !busOptions.isEmpty {
            destination = .other(name: destinationName, kind: kind, url: url, options: options + busOptions)
            Report.line("\(label): destination options \(options + busOptions)")
        }
        let gateway = try context.startGateway(name, [destination])
        let downstream = scenario.downstream
        defer {
            gateway.stop()
            downstream.stop()
        }
        var figures = Figures(title: label)
        figures.countBased = scenario.counts != nil
        let observed = Observed(gateway.process)
        /// What a phase delivered: from per-event receipts, or from the broker's count.
        func phaseDelivery(_ corpus: Corpus, _ load: LoadResult, since mark: Int) -> Delivery {
            if let counts = scenario.counts {
                return Delivery(counts: counts().map { ($0.count - mark, $0.at) }, load: load)
            }
            return Delivery(corpus: corpus, load: load, receipts: downstream.receipts(mark), destinations: 1)
        }

        // Warm-up: chain cache, the destination's connection, the stream's first file; not measured.
        let warm = try context.corpus(100)
        _ = try LoadRun.run(loop: context.loop, port: gateway.port, requests: warm.requests, connections: 8,
                            pace: .closedLoop, seconds: 10, server: observed)
        context.wait(seconds: 15) { downstream.count() >= 100 }
        guard downstream.count() >= 100 else {
            throw BenchError("\(label): only \(downstream.count()) of 100 warm-up deliveries arrived; \(gateway.deliveryReport())\n\(gateway.logTail)")
        }

        let pacedCorpus = try context.corpus(Int(Self.fixedRate * context.seconds) + 10)
        var mark = downstream.count()
        let paced = try LoadRun.run(loop: context.loop, port: gateway.port, requests: pacedCorpus.requests,
                                    connections: BenchContext.pacedConnections, pace: .fixedRate(perSecond: Self.fixedRate),
                                    seconds: context.seconds, server: observed)
        context.wait(seconds: 30) { downstream.count() - mark >= paced.result.ok }
        let pacedDelivery = phaseDelivery(pacedCorpus, paced.result, since: mark)
        figures.pacedDelivered = pacedDelivery.delivered
        figures.pacedExpected = paced.result.ok
        figures.pacedLatency = pacedDelivery.perDelivery
        figures.complete = pacedDelivery.delivered >= paced.result.ok
        Report.line("\(label), fixed \(Format.rate(Self.fixedRate)): acks \(paced.result.latencies.text)")
        Report.line("   delivered \(pacedDelivery.delivered)/\(paced.result.ok); POST -> receipt \(pacedDelivery.perDelivery.text)")

        let rounds = max(1, context.fanoutRounds)
        var latencies: [UInt64] = []
        for round in 1...rounds {
            let corpus = try context.corpus(Int(9_000 * context.seconds))
            mark = downstream.count()
            let brokerCPU = scenario.broker?.cpuNanoseconds() ?? 0
            let readerCPU = scenario.reader?.cpuNanoseconds() ?? 0
            let saturated = try LoadRun.run(loop: context.loop, port: gateway.port, requests: corpus.requests,
                                            connections: context.connections, pace: .closedLoop, seconds: context.seconds,
                                            server: observed)
            let atEndOfLoad = downstream.count() - mark
            context.wait(seconds: 60) { downstream.count() - mark >= saturated.result.ok }
            let delivery = phaseDelivery(corpus, saturated.result, since: mark)
            let backlog = saturated.result.ok - atEndOfLoad
            Report.line("\(label), saturation #\(round): accepted \(saturated.result.ok) at \(Format.rate(saturated.result.throughput)) (\(saturated.result.failed) failed)"
                        + (saturated.result.exhausted ? " [corpus ran out early]" : ""))
            Report.line("   delivered \(delivery.delivered)/\(saturated.result.ok) at \(Format.rate(delivery.deliveriesPerSecond)); backlog when the load stopped: \(backlog)")
            Report.line("   POST -> receipt \(delivery.perDelivery.text)")
            var cpu = saturated.cpuText
            if let broker = scenario.broker {
                let perEvent = Double(broker.cpuNanoseconds() - brokerCPU) / 1e3 / Double(max(1, delivery.delivered))
                figures.brokerMicroseconds = (figures.brokerMicroseconds ?? 0) + perEvent / Double(rounds)
                let cores = perEvent * delivery.deliveriesPerSecond / 1e6
                figures.brokerCores = (figures.brokerCores ?? 0) + cores / Double(rounds)
                cpu += "; broker CPU \(Format.fixed(perEvent, 0)) µs/event (load and drain), \(Format.fixed(cores * 100, 0))% of one core at this rate"
            }
            if let reader = scenario.reader {
                let perEvent = Double(reader.cpuNanoseconds() - readerCPU) / 1e3 / Double(max(1, delivery.delivered))
                cpu += "; reader (Python) CPU \(Format.fixed(perEvent, 0)) µs/event, \(Format.fixed(perEvent * delivery.deliveriesPerSecond / 1e4, 0))% of one core"
            }
            Report.line("   \(cpu)")
            if delivery.delivered < saturated.result.ok {
                figures.complete = false
                Report.line("   INCOMPLETE; the gateway's metrics: \(gateway.deliveryReport())")
            }
            figures.accepted += saturated.result.throughput / Double(rounds)
            figures.delivered += delivery.deliveriesPerSecond / Double(rounds)
            figures.gatewayMicroseconds += saturated.serverMicrosecondsPerRequest / Double(rounds)
            figures.backlog = max(figures.backlog, backlog)
            latencies += delivery.perDelivery.samples
        }
        figures.saturationLatency = LatencySummary(latencies)
        if let held = scenario.brokerCount() {
            Report.line("   cross-check: \(held), the reader saw \(downstream.count()) (warm-up included)")
        } else if figures.countBased {
            Report.line("   cross-check: the queue holds \(downstream.count()) events (warm-up included); the gateway's metrics: \(gateway.deliveryReport())")
        }
        return figures
    }

    // MARK: Brokers

    private func brokerDirectory(_ name: String) throws -> String {
        let directory = context.work + "/" + name
        try Files.recreateDirectory(directory)
        return directory
    }

    /// Waits until the broker accepts connections on `port` (up to `seconds`).
    private func waitForPort(_ port: UInt16, process: ChildProcess, log: String, seconds: Double = 10) throws {
        for _ in 0..<Int(seconds * 20) {
            if let fd = try? Socket.connect(port: port) {
                close(fd)
                return
            }
            if process.hasExited { break }
            usleep(50_000)
        }
        throw BenchError("\(process.command) did not listen on \(port):\n\(readText(log)?.suffix(2000) ?? "")")
    }

    /// Runs `tool` and returns its standard output.
    static func output(_ tool: String, _ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }
}

/// The harness's NATS consumer: one connection that makes JetStream API requests (answered on
/// `_INBOX.bench.N`) and records what the push consumer delivers to `bench.receipts`.
final class NATSWatch {
    let connection: NATSConnection
    private(set) var receipts: [BusReceipt] = []
    private var replies: [String: String] = [:]
    private var requests = 0

    init(loop: EventLoop, port: UInt16) throws {
        connection = try NATSConnection(loop: loop, port: port)
        connection.subscribe("_INBOX.bench.*", sid: 2)
        connection.onMessage = { [unowned self] message in
            if message.subject.hasPrefix("_INBOX.bench.") {
                replies[message.subject] = String(decoding: message.payload, as: UTF8.self)
            } else if let id = message.eventID {
                receipts.append(BusReceipt(id: id, at: message.at))
            }
        }
    }

    /// Publishes `payload` to `subject` and waits (running the loop) up to 5 s for the answer;
    /// a JetStream error answer (`"error": {...}`) or no answer throws.
    @discardableResult
    func request(_ subject: String, _ payload: String, context: BenchContext) throws -> String {
        requests += 1
        let inbox = "_INBOX.bench.\(requests)"
        connection.publish(subject, reply: inbox, payload: payload)
        context.wait(seconds: 5) { replies[inbox] != nil || connection.closed }
        guard let answer = replies.removeValue(forKey: inbox) else {
            throw BenchError("NATS: no answer to \(subject)\(connection.failure.map { " (\($0))" } ?? "") \(connection.errors)")
        }
        if answer.contains("\"error\"") { throw BenchError("NATS: \(subject) answered \(answer)") }
        return answer
    }
}

extension Delivery {
    /// A phase's delivery from the broker's own count, polled (`counts`: events added since the
    /// phase began, with when each poll answered): delivered is the highest count, and the rate
    /// is that over the time from the load's start to the first poll that saw it, so it is
    /// understated by up to one poll interval. No per-event latency.
    init(counts: [(count: Int, at: UInt64)], load: LoadResult) {
        let reached = counts.max { $0.count < $1.count }
        let end = reached.flatMap { best in counts.first { $0.count == best.count && $0.at > load.start } }?.at ?? 0
        delivered = max(0, reached?.count ?? 0)
        perDelivery = LatencySummary([])
        allReceived = LatencySummary([])
        deliveriesPerSecond = end > load.start ? Double(delivered) / (Double(end - load.start) / 1e9) : 0
    }
}
