import BenchKit
import Foundation

/// Issue 14, point 7: one gateway in cluster mode (a real `redis-server`, appendonly yes and
/// appendfsync always, on this machine) beside one in single-node journal mode, in the same
/// run and with the same load: acceptance at saturation and p99 at 1,000/s; the server's CPU
/// and commands per notification, from which a capacity estimate follows.
struct ClusterBenchmark {
    let context: BenchContext

    static let fixedRate = 1_000.0

    /// What one mode measured.
    struct Figures {
        var p99AtFixedRate: Double
        var saturation: Double
        var gatewayMicroseconds: Double
        /// Cluster mode only: the server's CPU and commands per accepted notification.
        var serverMicroseconds: Double?
        var serverCommands: Double?
    }

    func run() throws {
        Report.section("Cluster mode: one instance on redis-server (AOF always) beside single-node journal mode")
        guard let redisServer = Self.which("redis-server"), let redisCLI = Self.which("redis-cli") else {
            Report.line("skipped: redis-server is not installed (apt-get install -y redis-server)")
            return
        }
        let single = try measure("cluster-single", extra: [], server: nil)
        let directory = context.work + "/cluster-redis"
        try Files.recreateDirectory(directory)
        let port = Int(try Socket.freePort())
        let redis = try ChildProcess([redisServer, "--port", String(port), "--bind", "127.0.0.1", "--dir", directory,
                                      "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no"],
                                     stderr: directory + "/redis.log")
        defer { _ = redis.stop(signal: SIGTERM, timeout: 10) }
        try waitForRedis(cli: redisCLI, port: port)
        let cluster = try measure("cluster-redis-mode", extra: ["cluster redis://127.0.0.1:\(port) {", "    instance-id bench", "}"],
                                  server: (redis, redisCLI, port))

        let ratio = cluster.saturation / single.saturation
        Report.line("saturation: cluster \(Format.rate(cluster.saturation)) vs single-node \(Format.rate(single.saturation)) = \(Format.fixed(ratio * 100, 0))%")
        Report.line("gateway CPU per notification: cluster \(Format.fixed(cluster.gatewayMicroseconds, 0)) µs, single-node \(Format.fixed(single.gatewayMicroseconds, 0)) µs")
        if let serverMicroseconds = cluster.serverMicroseconds, let commands = cluster.serverCommands {
            let serverCeiling = 1e6 / serverMicroseconds
            Report.line("redis-server per notification (acceptance and its delivery to one file queue): \(Format.fixed(serverMicroseconds, 1)) µs CPU, \(Format.fixed(commands, 1)) commands")
            Report.line("capacity: one server core saturates near \(Format.rate(serverCeiling)); at this instance's \(Format.rate(cluster.saturation)) that is about \(Format.fixed(serverCeiling / cluster.saturation, 1)) instances per server")
        }
        Report.check(ratio >= 0.5, "cluster mode at saturation ≥ 50% of single-node mode in the same run (\(Format.fixed(ratio * 100, 0))%)")
        Report.check(cluster.p99AtFixedRate < 15, "cluster mode p99 < 15 ms at 1,000/s (\(Format.ms(cluster.p99AtFixedRate)))")
    }

    private func measure(_ name: String, extra: [String], server: (process: ChildProcess, cli: String, port: Int)?) throws -> Figures {
        let gateway = try context.startGateway(name, [.file(name: "queue", directory: context.work + "/" + name + "/queue")], extra: extra)
        defer { gateway.stop() }
        let observed = Observed(gateway.process)
        let mode = server == nil ? "single-node" : "cluster"
        try context.warmUp(gateway, observed: observed, label: mode + " ")
        let paced = try context.corpus(Int(Self.fixedRate * context.seconds) + 10)
        let pacedRun = try LoadRun.run(loop: context.loop, port: gateway.port, requests: paced.requests,
                                       connections: BenchContext.pacedConnections, pace: .fixedRate(perSecond: Self.fixedRate),
                                       seconds: context.seconds, server: observed)
        Report.line("\(mode), fixed \(Format.rate(Self.fixedRate)): \(pacedRun.text)")
        context.wait(seconds: 2)

        let corpus = try context.corpus(Int(6_000 * context.seconds))
        let serverCPU = server.map { $0.process.cpuNanoseconds() } ?? 0
        let serverCommands = try server.map { try Self.commandsProcessed(cli: $0.cli, port: $0.port) } ?? 0
        let saturated = try LoadRun.run(loop: context.loop, port: gateway.port, requests: corpus.requests,
                                        connections: context.connections, pace: .closedLoop, seconds: context.seconds, server: observed)
        // Deliveries to the file queue finish shortly after; their server work belongs to the
        // notifications too.
        context.wait(seconds: 3)
        Report.line("\(mode), saturation, \(context.connections) connections: \(saturated.text)")
        Report.line("   \(saturated.cpuText)")
        var figures = Figures(p99AtFixedRate: pacedRun.result.latencies.ms(0.99), saturation: saturated.result.throughput,
                              gatewayMicroseconds: saturated.serverMicrosecondsPerRequest)
        if let server {
            let accepted = Double(max(1, saturated.result.ok))
            figures.serverMicroseconds = Double(server.process.cpuNanoseconds() - serverCPU) / 1e3 / accepted
            figures.serverCommands = Double(try Self.commandsProcessed(cli: server.cli, port: server.port) - serverCommands) / accepted
        }
        if saturated.result.failed > 0 { Report.line("   \(saturated.result.failed) failed: \(saturated.result.firstFailure ?? "")") }
        return figures
    }

    /// `total_commands_processed` of `INFO stats`.
    private static func commandsProcessed(cli: String, port: Int) throws -> Int {
        let stats = output(cli, ["-p", String(port), "INFO", "stats"])
        let line = stats.split(whereSeparator: \.isNewline).first { $0.hasPrefix("total_commands_processed:") }
        guard let line, let count = Int(line.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) else {
            throw BenchError("redis-cli INFO stats gave no total_commands_processed: \(stats.prefix(200))")
        }
        return count
    }

    private func waitForRedis(cli: String, port: Int) throws {
        for _ in 0..<100 {
            if Self.output(cli, ["-p", String(port), "PING"]).contains("PONG") { return }
            usleep(50_000)
        }
        throw BenchError("redis-server did not answer PING on port \(port)")
    }

    /// Runs `tool` and returns its standard output.
    private static func output(_ tool: String, _ arguments: [String]) -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: tool)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        guard (try? process.run()) != nil else { return "" }
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    private static func which(_ name: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/", "/usr/sbin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
