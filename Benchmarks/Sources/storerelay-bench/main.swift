import BenchKit
import Foundation
import StoreRelaySimulator

/// storerelay-bench: StoreRelay's on-demand benchmarks (see Benchmarks/README.md).
/// Usage: storerelay-bench --binary PATH [--work DIR] [--seconds N] [--connections N] [--sweep 32,64,..]
///                         [--only crypto,verify,accept,stages,fanout,play,bus,cluster,dedupe,event-log,backlog,backlog-paused] [--perf] [--dedupe-ids 1000000,10000000]
///                         [--event-log-events 1000000,10000000]
///                         [--backlog 100000,1000000] [--cluster-servers redis-server,valkey-server]
///                         [--cluster-key both|yes|no] [--cluster-server-args "--auto-aof-rewrite-min-size 1gb"]
///                         [--fanout-rounds N] [--scenarios "1 webhook,4 webhooks,file queue"]
///                         [--only side-by-side --base-binary PATH [--side-rounds 3]] (this build against another, alternating)
///                         [--only bus [--buses redis-stream,nats,amqp,sqs] [--bus-options "concurrency 16; ..."]] (events delivered to each bus beside a webhook)
let arguments = Array(CommandLine.arguments.dropFirst())
func option(_ name: String) -> String? {
    guard let index = arguments.firstIndex(of: "--" + name), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}
let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
let binary = option("binary") ?? packageRoot + "/../.build/release/storerelay"
let work = option("work") ?? "/tmp/storerelay-bench"
let seconds = Double(option("seconds") ?? "5") ?? 5
let connections = Int(option("connections") ?? "256") ?? 256
let only = Set((option("only") ?? "crypto,verify,accept,fanout,cluster").split(separator: ",").map(String.init))

// The dedupe benchmark's probe: this binary again, in a fresh process (see DedupeBenchmark).
if let directory = option("dedupe-probe") {
    do {
        try DedupeBenchmark.probe(directory: directory, count: Int(option("ids") ?? "") ?? 0)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}

// The event-log benchmark's probe, likewise (see EventLogBenchmark).
if let directory = option("event-log-probe") {
    do {
        try EventLogBenchmark.probe(directory: directory, count: Int(option("events") ?? "") ?? 0)
    } catch {
        FileHandle.standardError.write(Data("\(error)\n".utf8))
        exit(1)
    }
}
let eventLogCounts = (option("event-log-events") ?? "1000000,10000000").split(separator: ",").compactMap { Int($0) }

do {
    guard FileManager.default.isExecutableFile(atPath: binary) else {
        throw BenchError("no gateway binary at \(binary): run `swift build -c release` in the repository root first")
    }
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    Machine.describe(binary: binary)
    if only == ["event-log"] {
        // Storage only, as dedupe.
        try EventLogBenchmark(work: work, counts: eventLogCounts).run()
        Report.summary()
        exit(0)
    }
    if only == ["dedupe"] {
        // Storage only: no gateway, chain or crypto ceiling needed.
        let counts = (option("dedupe-ids") ?? "1000000,10000000").split(separator: ",").compactMap { Int($0) }
        try DedupeBenchmark(work: work, counts: counts).run()
        Report.summary()
        exit(0)
    }

    let chain = work + "/chain"
    let make = try ChildProcess(["/bin/sh", packageRoot + "/make-chain.sh", chain], stdout: work + "/make-chain.log", stderr: work + "/make-chain.log")
    guard make.wait() == 0 else { throw BenchError("make-chain.sh failed: \(readText(work + "/make-chain.log") ?? "")") }
    let authority = try DevCertificateAuthority.loadOrCreate(directory: chain)
    var context = BenchContext(binary: binary, work: work, chain: chain, authority: authority, loop: try EventLoop(),
                               seconds: seconds, connections: connections, profile: arguments.contains("--perf"),
                               sweep: (option("sweep") ?? "32,64,128,256,512").split(separator: ",").compactMap { Int($0) },
                               fanoutRounds: Int(option("fanout-rounds") ?? "2") ?? 2,
                               scenarios: Set((option("scenarios") ?? "").split(separator: ",").map(String.init)))
    // --verify-nested yes: every gateway of the run checks each nested JWS on its own (three
    // ES256 checks per DID_RENEW, as before issue 31); the default checks one.
    if let nested = option("verify-nested") { context.gatewayLines.append("verify-nested \(nested)") }
    let checksPerNotification = option("verify-nested") == "yes" ? 3.0 : 1.0

    Report.section("Crypto ceiling: openssl speed -seconds 3 ecdsap256")
    let single = try OpenSSLSpeed.measure(seconds: 3, processes: 1, scratch: work)
    let multi = try OpenSSLSpeed.measure(seconds: 3, processes: 2, scratch: work)
    Report.line("one core:   \(Format.rate(single.verificationsPerSecond)) verify, \(Format.rate(single.signsPerSecond)) sign -> \(Format.rate(single.verificationsPerSecond / 3)) notifications (÷ 3)")
    Report.line("-multi 2:   \(Format.rate(multi.verificationsPerSecond)) verify, \(Format.rate(multi.signsPerSecond)) sign -> \(Format.rate(multi.verificationsPerSecond / 3)) notifications (÷ 3) = the crypto ceiling")

    if only.contains("verify") {
        try VerifyBenchmark(context: context, single: single, multi: multi).run()
    }
    if only.contains("accept") {
        try AcceptanceBenchmark(context: context, cryptoCeiling: multi.verificationsPerSecond / 3,
                                singleCoreVerifications: single.verificationsPerSecond,
                                checksPerNotification: checksPerNotification).run()
    }
    if only.contains("side-by-side") {
        guard let base = option("base-binary"), FileManager.default.isExecutableFile(atPath: base) else {
            throw BenchError("--only side-by-side needs --base-binary PATH (run.sh --base COMMIT builds one)")
        }
        try SideBySideBenchmark(context: context, baseBinary: base, rounds: Int(option("side-rounds") ?? "3") ?? 3).run()
    }
    if only.contains("stages") {
        try StageCostBenchmark(context: context, singleCoreVerifications: single.verificationsPerSecond,
                               checksPerNotification: checksPerNotification).run()
    }
    if only.contains("fanout") {
        try FanoutBenchmark(context: context).run()
    }
    if only.contains("play") {
        try PlayBenchmark(context: context).run()
    }
    if only.contains("bus") {
        let names = (option("buses") ?? BusBenchmark.Bus.allCases.map(\.rawValue).joined(separator: ",")).split(separator: ",")
        let buses = try names.map { name in
            guard let bus = BusBenchmark.Bus(rawValue: String(name)) else {
                throw BenchError("--buses: unknown bus '\(name)' (known: \(BusBenchmark.Bus.allCases.map(\.rawValue).joined(separator: ", ")))")
            }
            return bus
        }
        let busOptions = (option("bus-options") ?? "").split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        try BusBenchmark(context: context, buses: buses, busOptions: busOptions).run()
    }
    if only.contains("cluster") {
        let sealing: [Bool] = switch option("cluster-key") ?? "both" {
        case "yes": [true]
        case "no": [false]
        default: [false, true]
        }
        let servers = (option("cluster-servers") ?? "redis-server,valkey-server").split(separator: ",").map(String.init)
        let serverArguments = (option("cluster-server-args") ?? "").split(separator: " ").map(String.init)
        try ClusterBenchmark(context: context, servers: servers, sealing: sealing, serverArguments: serverArguments).run()
    }
    let backlogCounts = (option("backlog") ?? "100000,1000000").split(separator: ",").compactMap { Int($0) }
    if only.contains("backlog") {
        try BacklogBenchmark(context: context, counts: backlogCounts).run()
    }
    if only.contains("backlog-paused") {
        try BacklogBenchmark(context: context, counts: backlogCounts, paused: true).run()
    }
    if only.contains("dedupe") {
        let counts = (option("dedupe-ids") ?? "1000000,10000000").split(separator: ",").compactMap { Int($0) }
        try DedupeBenchmark(work: work, counts: counts).run()
    }
    if only.contains("event-log") {
        try EventLogBenchmark(work: work, counts: eventLogCounts).run()
    }
    Report.summary()
} catch {
    Report.line("storerelay-bench: \(error)")
    exit(1)
}
