import Dispatch
import StoreRelayConfig
import StoreRelayGateway
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `storerelay serve`: runs the gateway until SIGTERM or SIGINT.
enum ServeCommand: CommandDescribing {
    static let name = "serve"
    static let summary = "run the gateway"
    static let help = """
        Usage: storerelay serve [--config FILE] [--log-level LEVEL]

        Runs the gateway: verifies Apple's notifications on the public listener, answers 200
        once each is durably journaled under the data directory, and fans events out to the
        destinations their routes name. Logs are JSON lines on stderr. SIGHUP reloads the
        configuration (an invalid file is rejected and the old one stays). SIGTERM or SIGINT
        stops accepting, answers requests in flight, flushes the journal and exits 0.

        Options:
          --config FILE       the configuration (default: $STORERELAY_CONFIG, ./routes.conf,
                              or the embedded default)
          --log-level LEVEL   trace, debug, info (default), notice, warning, error, critical
        """

    static func run(_ arguments: [String]) -> Int32 {
        let parsed: ParsedArguments
        let level: LogLevel
        do {
            parsed = try ArgumentSpec(valueOptions: ["config", "log-level"]).parse(arguments)
            let name = parsed.option("log-level") ?? "info"
            guard let known = LogLevel(name: name) else {
                throw UsageError("unknown log level '\(name)' (expected one of: "
                    + LogLevel.allCases.map(\.name).joined(separator: ", ") + ")")
            }
            level = known
        } catch {
            writeStandardError("storerelay serve: \(error)")
            return ExitCode.usage
        }
        let logger = Logger(label: "storerelay", level: level)
        let configuration: GatewayConfiguration
        do {
            configuration = try ConfigurationLoader.load(option: parsed.option("config"))
        } catch {
            writeStandardError(error.description)
            return ExitCode.failure
        }
        ProcessSetup.prepare(logger: logger)
        // Signals are handled from before the gateway starts: a SIGHUP or SIGTERM in the
        // moment after `listening` is logged must not kill the process with the default
        // action. What arrives before the gateway runs is carried out once it does.
        let configOption = parsed.option("config")
        let running = RunningGateway()
        ProcessSetup.handleSignals(logger: logger, stop: {
            running.whenStarted(stop: true) { gateway in gateway.stop { exit(ExitCode.ok) } }
        }, reload: {
            running.whenStarted(stop: false) { gateway in
                // Parsed and validated first: on any error the old configuration stays.
                do {
                    let reloaded = try ConfigurationLoader.load(option: configOption)
                    try gateway.reload(reloaded)
                } catch let error as ConfigurationLoader.Failure {
                    logger.error("reload rejected; the previous configuration stays", [("errors", error.description)])
                } catch {
                    logger.error("reload rejected; the previous configuration stays", [("errors", "\(error)")])
                }
            }
        })
        do {
            running.start(try Gateway(configuration: configuration, logger: logger))
        } catch {
            logger.critical("cannot start", [("error", error.description)])
            writeStandardError("storerelay serve: \(error.description)")
            return ExitCode.failure
        }
        dispatchMain()
    }
}

/// The gateway the signal handlers act on, once it runs; until then the actions asked for
/// wait (a stop, and a reload, each at most once) and run as soon as it does.
final class RunningGateway: Sendable {
    private struct State {
        var gateway: Gateway?
        var waiting: [(isStop: Bool, action: @Sendable (Gateway) -> Void)] = []
    }
    private let state = Locked(State())

    func whenStarted(stop isStop: Bool, _ action: @escaping @Sendable (Gateway) -> Void) {
        let gateway = state.withLock { state -> Gateway? in
            if let gateway = state.gateway { return gateway }
            if !state.waiting.contains(where: { $0.isStop == isStop }) { state.waiting.append((isStop, action)) }
            return nil
        }
        gateway.map(action)
    }

    func start(_ gateway: Gateway) {
        let waiting = state.withLock { state in
            state.gateway = gateway
            defer { state.waiting = [] }
            return state.waiting
        }
        // A reload asked for before a stop runs first; a stop ends it all anyway.
        for (_, action) in waiting.sorted(by: { !$0.isStop && $1.isStop }) { action(gateway) }
    }
}
