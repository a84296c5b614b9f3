import BenchKit
import Foundation

/// Issue 14, point 7, and issue 26, point 4: one gateway in cluster mode (a real
/// `redis-server` or `valkey-server`, appendonly yes and appendfsync always, on this machine)
/// beside one in single-node journal mode, in the same run and with the same load: acceptance
/// at saturation and p99 at 1,000/s; the server's CPU and commands per notification, from which
/// a capacity estimate follows.
///
/// Cluster mode runs in each variant asked for: per server, without and with `cluster-key`
/// (every record sealed with an HMAC, as README recommends). Single-node mode is measured
/// before and after them, and each ratio is taken against the mean of the two, so a machine
/// that got busier or quieter during the run does not decide the ratio alone.
struct ClusterBenchmark {
    let context: BenchContext
    /// Server binaries, by name or path; those not installed are skipped with a line.
    let servers: [String]
    /// Whether to run cluster mode without `cluster-key` (false), with it (true), or both.
    let sealing: [Bool]
    /// Extra server arguments (`--auto-aof-rewrite-min-size 1gb`, say).
    let serverArguments: [String]

    static let fixedRate = 1_000.0
    /// A fixed `cluster-key` for the sealed variants (64 hex characters).
    static let clusterKey = "6a1f0c2b9e8d7a6f5e4d3c2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a29"

    /// What one mode measured.
    struct Figures {
        var p99AtFixedRate: Double
        var saturation: Double
        var gatewayMicroseconds: Double
        /// Cluster mode only: the server's CPU and commands per accepted notification.
        var serverMicroseconds: Double?
        var serverCommands: Double?
        /// Cluster mode only: AOF rewrites the server ran during the timed phases.
        var aofRewrites: Int?
        /// This disk's fdatasync time (p50, ms) just before and just after the saturation round.
        var fsync: (before: Double?, after: Double?) = (nil, nil)

        var fsyncText: String {
            [fsync.before, fsync.after].map { $0.map { Format.fixed($0, 2) } ?? "?" }.joined(separator: " / ") + " ms"
        }
    }

    /// One cluster-mode configuration, measured.
    struct Variant {
        let label: String
        let figures: Figures
    }

    func run() throws {
        Report.section("Cluster mode: one instance on a Redis-protocol server (AOF always) beside single-node journal mode")
        let redisCLI = Self.which("redis-cli") ?? Self.which("valkey-cli")
        var found: [(name: String, path: String)] = []
        for server in servers {
            if let path = server.contains("/") ? server : Self.which(server) {
                let name = String(server.split(separator: "/").last ?? Substring(server))
                found.append((Self.version(path).map { "\(name) \($0)" } ?? name, path))
            } else {
                Report.line("skipped \(server): not installed (apt-get install -y redis-server; script/setup links valkey-server)")
            }
        }
        guard !found.isEmpty, let redisCLI else {
            Report.line("skipped: no server (or no redis-cli) installed")
            return
        }
        let before = try measure("cluster-single", extra: [], server: nil, label: "single-node (before)")
        var variants: [Variant] = []
        for (index, server) in found.enumerated() {
            for sealed in sealing {
                let name = "cluster-\(index)-\(sealed ? "sealed" : "plain")"
                let directory = context.work + "/" + name + "-server"
                try Files.recreateDirectory(directory)
                let port = Int(try Socket.freePort())
                let process = try ChildProcess([server.path, "--port", String(port), "--bind", "127.0.0.1", "--dir", directory,
                                                "--appendonly", "yes", "--appendfsync", "always", "--save", "", "--daemonize", "no"]
                                                + serverArguments,
                                               stderr: directory + "/server.log")
                defer { _ = process.stop(signal: SIGTERM, timeout: 10) }
                try waitForServer(cli: redisCLI, port: port)
                var block = ["cluster redis://127.0.0.1:\(port) {", "    instance-id bench"]
                if sealed { block.append("    cluster-key \(Self.clusterKey)") }
                block.append("}")
                let label = "cluster, \(server.name)" + (sealed ? ", cluster-key" : "")
                let figures = try measure(name, extra: block, server: (process, redisCLI, port), label: label)
                variants.append(Variant(label: label, figures: figures))
            }
        }
        let after = try measure("cluster-single-after", extra: [], server: nil, label: "single-node (after)")
        let baseline = (before.saturation + after.saturation) / 2
        let baselineMicroseconds = (before.gatewayMicroseconds + after.gatewayMicroseconds) / 2

        Report.line("")
        Report.line("single-node saturation: \(Format.rate(before.saturation)) before, \(Format.rate(after.saturation)) after, "
            + "mean \(Format.rate(baseline)); p99 at \(Format.rate(Self.fixedRate)) \(Format.ms(before.p99AtFixedRate)) / "
            + "\(Format.ms(after.p99AtFixedRate)); gateway CPU \(Format.fixed(baselineMicroseconds, 0)) µs per notification")
        Report.line("| mode | saturation | ratio to single-node | p99 at 1,000/s | gateway CPU/notification | server CPU/notification | server commands/notification | AOF rewrites | disk fsync p50 before / after |")
        Report.line("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for (label, figures) in [("single-node, before", before), ("single-node, after", after)] {
            Report.line("| \(label) | \(Format.rate(figures.saturation)) | \(Format.fixed(figures.saturation / baseline * 100, 0))% | "
                + "\(Format.ms(figures.p99AtFixedRate)) | \(Format.fixed(figures.gatewayMicroseconds, 0)) µs | | | | \(figures.fsyncText) |")
        }
        for variant in variants {
            let figures = variant.figures
            Report.line("| \(variant.label) | \(Format.rate(figures.saturation)) | "
                + "\(Format.fixed(figures.saturation / baseline * 100, 0))% | \(Format.ms(figures.p99AtFixedRate)) | "
                + "\(Format.fixed(figures.gatewayMicroseconds, 0)) µs | "
                + "\(figures.serverMicroseconds.map { Format.fixed($0, 0) + " µs" } ?? "") | "
                + "\(figures.serverCommands.map { Format.fixed($0, 1) } ?? "") | \(figures.aofRewrites.map(String.init) ?? "") | "
                + "\(figures.fsyncText) |")
        }
        for variant in variants {
            if let serverMicroseconds = variant.figures.serverMicroseconds {
                let serverCeiling = 1e6 / serverMicroseconds
                Report.line("capacity, \(variant.label): one server core saturates near \(Format.rate(serverCeiling)); at this "
                    + "instance's \(Format.rate(variant.figures.saturation)) that is about "
                    + "\(Format.fixed(serverCeiling / variant.figures.saturation, 1)) instances per server")
            }
        }
        for variant in variants {
            let ratio = variant.figures.saturation / baseline
            Report.check(ratio >= 0.5, "\(variant.label): saturation ≥ 50% of single-node mode in the same run (\(Format.fixed(ratio * 100, 0))%)")
            Report.check(variant.figures.p99AtFixedRate < 15, "\(variant.label): p99 < 15 ms at 1,000/s (\(Format.ms(variant.figures.p99AtFixedRate)))")
        }
    }

    private func measure(_ name: String, extra: [String], server: (process: ChildProcess, cli: String, port: Int)?,
                         label mode: String) throws -> Figures {
        let gateway = try context.startGateway(name, [.file(name: "queue", directory: context.work + "/" + name + "/queue")], extra: extra)
        defer { gateway.stop() }
        let observed = Observed(gateway.process)
        try context.warmUp(gateway, observed: observed, label: mode + " ")
        let rewrites = server.map { Self.info($0.cli, $0.port, "persistence", "aof_rewrites") ?? 0 }
        let paced = try context.corpus(Int(Self.fixedRate * context.seconds) + 10)
        let pacedRun = try LoadRun.run(loop: context.loop, port: gateway.port, requests: paced.requests,
                                       connections: BenchContext.pacedConnections, pace: .fixedRate(perSecond: Self.fixedRate),
                                       seconds: context.seconds, server: observed)
        Report.line("\(mode), fixed \(Format.rate(Self.fixedRate)): \(pacedRun.text)")
        context.wait(seconds: 2)

        let corpus = try context.corpus(Int(6_000 * context.seconds))
        // With appendfsync always the server fsyncs, in its main thread, once per event-loop
        // iteration that wrote, and reads one buffer from each client connection per
        // iteration; the gateway's acknowledgements come over one connection. This disk's
        // fsync time (which on a shared VM can go from 0.1 to 4 ms within a minute) thus
        // bounds cluster-mode acceptance: measured around each round so a run can be read.
        let fsyncBefore = Self.fsyncProbe(directory: context.work)
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
        figures.fsync = (fsyncBefore, Self.fsyncProbe(directory: context.work))
        Report.line("   disk: fdatasync of a 200-byte append, p50 \(figures.fsyncText) before / after the round")
        if let server {
            let accepted = Double(max(1, saturated.result.ok))
            figures.serverMicroseconds = Double(server.process.cpuNanoseconds() - serverCPU) / 1e3 / accepted
            figures.serverCommands = Double(try Self.commandsProcessed(cli: server.cli, port: server.port) - serverCommands) / accepted
            // A rewrite forks and writes the whole dataset (the recent-events window holds
            // about 2,000 stored notifications) while the AOF fsyncs: on two shared cores it
            // takes acceptance down while it runs. Counted so a run can be read.
            figures.aofRewrites = (Self.info(server.cli, server.port, "persistence", "aof_rewrites") ?? 0) - (rewrites ?? 0)
            let memory = Self.info(server.cli, server.port, "memory", "used_memory").map { Format.fixed(Double($0) / 1_048_576, 0) + " MiB" }
            Report.line("   server: \(figures.aofRewrites ?? 0) AOF rewrites during the timed phases, dataset \(memory ?? "?")")
        }
        if saturated.result.failed > 0 { Report.line("   \(saturated.result.failed) failed: \(saturated.result.firstFailure ?? "")") }
        return figures
    }

    /// 200 appends of 200 bytes, each followed by `fdatasync`: the median, in milliseconds.
    private static func fsyncProbe(directory: String) -> Double? {
        let path = directory + "/fsync-probe"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0o600)
        guard fd >= 0 else { return nil }
        defer { close(fd); unlink(path) }
        let line = [UInt8](repeating: 0x78, count: 200)
        var times: [Double] = []
        for _ in 0..<200 {
            let start = Monotonic.nanoseconds()
            guard line.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == line.count, fdatasync(fd) == 0 else { return nil }
            times.append(Double(Monotonic.nanoseconds() - start) / 1e6)
        }
        times.sort()
        return times[times.count / 2]
    }

    /// An integer field of `INFO section`.
    private static func info(_ cli: String, _ port: Int, _ section: String, _ field: String) -> Int? {
        let text = output(cli, ["-p", String(port), "INFO", section])
        let line = text.split(whereSeparator: \.isNewline).first { $0.hasPrefix(field + ":") }
        return line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) }
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

    private func waitForServer(cli: String, port: Int) throws {
        for _ in 0..<100 {
            if Self.output(cli, ["-p", String(port), "PING"]).contains("PONG") { return }
            usleep(50_000)
        }
        throw BenchError("the server did not answer PING on port \(port)")
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

    /// `v=7.0.15` of `redis-server --version` (valkey-server prints the same shape).
    private static func version(_ path: String) -> String? {
        output(path, ["--version"]).split(separator: " ").first { $0.hasPrefix("v=") }.map { String($0.dropFirst(2)) }
    }

    private static func which(_ name: String) -> String? {
        ["/usr/bin/", "/usr/local/bin/", "/usr/sbin/"].map { $0 + name }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }
}
