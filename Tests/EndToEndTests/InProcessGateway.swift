import Foundation
import StoreRelayConfig
import StoreRelayCore
import StoreRelayGateway
import StoreRelayTestSupport
import Testing

/// What runs an end-to-end test's gateway: the assembled gateway inside the test process
/// (`InProcessGateway`, the default), or a child `storerelay serve` (`GatewayProcess`), for
/// what needs a process of its own: `kill -9`, `SIGSTOP`, resource limits, the command line.
protocol GatewayHost: AnyObject, Sendable {
    var configPath: URL { get }
    var isRunning: Bool { get }
    /// Every log line so far, one JSON object each.
    var logLines: [String] { get }
    func waitForLog(timeout: Double, where predicate: (JSONValue) -> Bool) -> JSONValue?
    func waitForPort(listener: String, timeout: Double) throws -> Int
    /// SIGTERM and SIGINT stop the gateway, SIGHUP reloads routes.conf.
    func send(_ signal: Int32)
    func waitForExit(timeout: Double) -> Int32?
}

extension GatewayHost {
    var logRecords: [JSONValue] { logLines.compactMap { try? JSONValue.parse($0) } }

    func waitForLog(where predicate: (JSONValue) -> Bool) -> JSONValue? { waitForLog(timeout: 20, where: predicate) }
    func waitForPort(listener: String = "public") throws -> Int { try waitForPort(listener: listener, timeout: 20) }
    func waitForExit() -> Int32? { waitForExit(timeout: 20) }
}

extension GatewayProcess: GatewayHost {}

/// `storerelay serve` without the process: routes.conf written to the test's directory and
/// parsed as `serve` would, the gateway assembled in this process with its log kept in
/// memory, SIGTERM/SIGINT/SIGHUP played by `stop` and `reload`.
///
/// A child resolves routes.conf's relative paths against its working directory, the test's
/// directory; a test process has one working directory for every test, so each `./` that
/// starts a word is made the directory's absolute path before parsing (on start and on
/// every reload), and the file keeps what the test wrote.
final class InProcessGateway: GatewayHost, @unchecked Sendable {
    // Invariant: `gateway` is set once in init (nil when it failed to start, as `serve`
    // would exit 1); mutable state lives in `state`.
    let configPath: URL
    private let directory: URL
    private let environment: [String: String]
    private let sink = MemorySink()
    private let logger: Logger
    private let gateway: StoreRelayGateway.Gateway?
    private let reloads = DispatchQueue(label: "storerelay.test.reload")

    private struct State {
        var exitStatus: Int32?
        var stopping = false
    }
    private let state = Locked(State())

    init(config: String, directory: URL, environment: [String: String] = [:], hooks: GatewayTestHooks = GatewayTestHooks()) throws {
        self.directory = directory
        configPath = directory.appendingPathComponent("routes.conf")
        try config.write(to: configPath, atomically: true, encoding: .utf8)
        self.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        logger = Logger(label: "storerelay", level: .info, sink: sink)
        var started: StoreRelayGateway.Gateway?
        do {
            // `serve` waits for a cluster server without holding a thread; a test may wait.
            let configuration = try Self.parse(config, directory: directory, environment: self.environment)
            started = try waitForCompletion { [logger] in
                StoreRelayGateway.Gateway.start(configuration: configuration, logger: logger, hooks: hooks, completion: $0)
            }
        } catch {
            logger.critical("cannot start", [("error", "\(error)")])
            state.withLock { $0.exitStatus = 1 }
        }
        gateway = started
    }

    deinit {
        guard let gateway, state.current.exitStatus == nil else { return }
        let stopped = DispatchSemaphore(value: 0)
        gateway.stop { stopped.signal() }
        stopped.wait()
    }

    static func parse(_ text: String, directory: URL, environment: [String: String]) throws -> GatewayConfiguration {
        let absolute = text.replacingOccurrences(of: #"(^|[\s"'])\./"#, with: "$1" + directory.path + "/", options: .regularExpression)
        return try GatewayConfiguration.parse(text: absolute, fileName: directory.appendingPathComponent("routes.conf").path,
                                              environment: environment)
    }

    var isRunning: Bool { state.current.exitStatus == nil }
    var logLines: [String] { sink.lines }

    func waitForLog(timeout: Double, where predicate: (JSONValue) -> Bool) -> JSONValue? {
        LogWatch.waitForRecord(in: { logLines }, while: { isRunning }, timeout: timeout, where: predicate)
    }

    func waitForPort(listener: String, timeout: Double) throws -> Int {
        guard let record = waitForLog(timeout: timeout, where: {
            $0["message"]?.stringValue == "listening" && $0["listener"]?.stringValue == listener
        }), let port = record["address"]?.stringValue?.split(separator: ":").last.flatMap({ Int($0) }) else {
            throw GatewayProcessError(message: "gateway did not start listening; log:\n" + logLines.joined(separator: "\n"))
        }
        return port
    }

    func send(_ signal: Int32) {
        guard let gateway, isRunning else { return }
        switch signal {
        case SIGTERM, SIGINT:
            let first = state.withLock { state in
                defer { state.stopping = true }
                return !state.stopping
            }
            guard first else { return }
            logger.info("signal received", [("signal", signal == SIGTERM ? "SIGTERM" : "SIGINT")])
            gateway.stop { [state] in state.withLock { $0.exitStatus = 0 } }
        case SIGHUP:
            reloads.async { [self] in
                logger.info("signal received", [("signal", "SIGHUP")])
                do {
                    let text = try String(contentsOf: configPath, encoding: .utf8)
                    gateway.reload(try Self.parse(text, directory: directory, environment: environment)) { [logger] error in
                        guard let error else { return }
                        logger.error("reload rejected; the previous configuration stays", [("errors", "\(error)")])
                    }
                } catch {
                    logger.error("reload rejected; the previous configuration stays", [("errors", "\(error)")])
                }
            }
        default:
            Issue.record("an in-process gateway cannot take signal \(signal): give this test a child process (`.childProcess`)")
        }
    }

    func waitForExit(timeout: Double) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if let status = state.current.exitStatus { return status }
            Thread.sleep(forTimeInterval: 0.01)
        }
        return nil
    }
}
