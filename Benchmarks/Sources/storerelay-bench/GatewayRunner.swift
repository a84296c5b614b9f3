import BenchKit
#if canImport(Glibc)
import Glibc
#endif

/// The real `storerelay serve` as a child process, with a routes.conf written for one
/// benchmark: loopback listeners on free ports, a fresh data directory, the bench chain's root
/// trusted, and the destinations the benchmark measures.
final class GatewayRunner {
    enum Destination {
        /// A webhook to the sink's `path`, with extra block lines (`max-attempts 1000`, ...).
        case webhook(name: String, port: UInt16, path: String, options: [String] = [])
        /// A file queue in `directory` (no rotation during a run).
        case file(name: String, directory: String)
        /// A destination of any other kind, written as `destination NAME KIND URL { options }`:
        /// the buses (`redis-stream`, `nats`, ...) differ only in their kind, URL and block.
        case other(name: String, kind: String, url: String, options: [String])

        var name: String {
            switch self {
            case .webhook(let name, _, _, _), .file(let name, _), .other(let name, _, _, _): name
            }
        }
    }

    static let notificationPath = "/appstore/notifications"

    let process: ChildProcess
    let port: UInt16
    let adminPort: UInt16
    let directory: String
    let logPath: String

    let binary: String

    /// Writes the configuration into `directory` (created fresh) and starts the gateway.
    /// `extra` lines are appended verbatim (a `cluster` block, say).
    init(binary: String, directory: String, trustRoot: String, destinations: [Destination], extra: [String] = []) throws {
        self.binary = binary
        try Files.recreateDirectory(directory)
        // Earlier phases (and runs) leave gigabytes of dirty pages and deleted files behind:
        // write them out now, so their writeback does not stall this gateway's group commits
        // and count as its latency (the likely cause of a 300 ms tail at 1,000/s seen once).
        sync()
        self.directory = directory
        port = try Socket.freePort()
        let admin = try Socket.freePort()
        adminPort = admin
        var lines = [
            "listen 127.0.0.1:\(port)",
            "path \(Self.notificationPath)",
            "admin 127.0.0.1:\(admin)",
            "data \(directory)/data",
            "max-body 1MiB",
            // The load comes from one address, as through a proxy: up to 512 connections.
            "max-connections-per-address 1024",
            "trust-root \(trustRoot)",
            "environments production sandbox",
        ]
        for destination in destinations {
            switch destination {
            case .webhook(let name, let port, let path, let options):
                lines += [
                    "destination \(name) webhook http://127.0.0.1:\(port)\(path) {",
                    // Signed like a real deployment: the HMAC is part of the cost.
                    "    signing-secret whsec_c3RvcmVyZWxheS1iZW5jaC1zaWduaW5nLWtleQ==",
                ] + options.map { "    " + $0 } + ["}"]
            case .file(let name, let queue):
                lines += ["destination \(name) file \(queue) {", "    rotate 1GiB 1h", "}"]
            case .other(let name, let kind, let url, let options):
                lines += ["destination \(name) \(kind) \(url) {"] + options.map { "    " + $0 } + ["}"]
            }
        }
        lines.append("route * * * -> " + destinations.map(\.name).joined(separator: ", "))
        lines += extra
        let config = directory + "/routes.conf"
        try Files.write(config, lines.joined(separator: "\n") + "\n")
        logPath = directory + "/gateway.log"
        // Warnings only: logging every acceptance costs CPU. STORERELAY_BENCH_LOG_LEVEL=info
        // keeps every attempt in gateway.log when a run needs explaining.
        let level = getenv("STORERELAY_BENCH_LOG_LEVEL").map { String(cString: $0) } ?? "warning"
        process = try ChildProcess([binary, "serve", "--config", config, "--log-level", level], stderr: logPath)
        do {
            try BlockingHTTP.waitFor(port: port, path: "/readyz", process: process)
        } catch {
            process.stop(signal: SIGKILL)
            throw BenchError("\(error) — gateway log:\n\(readText(logPath) ?? "")")
        }
    }

    /// What the gateway's own metrics say about its deliveries (attempts by outcome, in flight,
    /// waiting, parked, breakers): printed when a phase did not deliver everything, to tell a
    /// destination that failed (retries) from one that never answered (nothing counted).
    func deliveryReport() -> String {
        guard let text = BlockingHTTP.getText(port: adminPort, path: "/metrics") else { return "no /metrics answer" }
        let wanted = ["storerelay_deliveries_total{", "storerelay_in_flight{", "storerelay_queue_depth{",
                      "storerelay_queue_parked{", "storerelay_breaker_state{"]
        return text.split(separator: "\n").filter { line in wanted.contains { line.hasPrefix($0) } }
            .map { $0.dropFirst("storerelay_".count) }.joined(separator: "; ")
    }

    /// Stops the gateway with SIGTERM (graceful) and returns whether it exited 0.
    @discardableResult
    func stop() -> Bool {
        let status = process.stop(signal: SIGTERM, timeout: 15)
        return status == 0
    }

    /// The gateway's own warnings and errors, for the report when something failed.
    var logTail: String {
        let text = readText(logPath) ?? ""
        return String(text.suffix(2000))
    }
}
