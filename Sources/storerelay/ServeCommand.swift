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
        // Signals are handled from before the gateway starts: a SIGHUP in the moment after
        // `listening` is logged must not kill the process with the default action. A stop
        // before the gateway runs exits at once (the journal is made to survive that); a
        // reload waits for it.
        let configOption = parsed.option("config")
        let running = RunningGateway()
        ProcessSetup.handleSignals(logger: logger, stop: {
            running.stop(beforeStart: {
                logger.info("stopped before the gateway was running")
                exit(ExitCode.ok)
            }) { gateway in gateway.stop { exit(ExitCode.ok) } }
        }, reload: {
            running.reload { gateway in
                // Parsed and validated first: on any error the old configuration stays.
                do {
                    let reloaded = try ConfigurationLoader.load(option: configOption)
                    try DevCAProvisioning.provision(reloaded, logger: logger)
                    gateway.reload(reloaded) { error in
                        guard let error else { return }
                        logger.error("reload rejected; the previous configuration stays", [("errors", "\(error)")])
                    }
                } catch let error as ConfigurationLoader.Failure {
                    logger.error("reload rejected; the previous configuration stays", [("errors", error.description)])
                } catch {
                    logger.error("reload rejected; the previous configuration stays", [("errors", "\(error)")])
                }
            }
        })
        do {
            try DevCAProvisioning.provision(configuration, logger: logger)
        } catch {
            logger.critical("cannot start", [("error", error.message)])
            writeStandardError("storerelay serve: cannot create the dev CA: \(error.message)")
            return ExitCode.failure
        }
        // Cluster mode waits for its server here: on a queue, so the signal handlers above
        // answer meanwhile.
        Gateway.start(configuration: configuration, logger: logger) { started in
            switch started {
            case .success(let gateway):
                running.start(gateway)
            case .failure(let error):
                logger.critical("cannot start", [("error", error.description)])
                writeStandardError("storerelay serve: \(error.description)")
                exit(ExitCode.failure)
            }
        }
        dispatchMain()
    }
}

/// The gateway the signal handlers act on, once it runs. Reloads run one at a time, on one
/// queue, including one asked for before the gateway ran (it waits for the start).
final class RunningGateway: Sendable {
    private struct State {
        var gateway: Gateway?
        var reloadWaiting: (@Sendable (Gateway) -> Void)?
    }
    private let state = Locked(State())
    private let reloads = DispatchQueue(label: "storerelay.reload.apply")

    /// Stops the running gateway; before it runs, `beforeStart` instead.
    func stop(beforeStart: @Sendable () -> Void, _ action: @Sendable (Gateway) -> Void) {
        if let gateway = state.current.gateway { action(gateway) } else { beforeStart() }
    }

    func reload(_ action: @escaping @Sendable (Gateway) -> Void) {
        let gateway = state.withLock { state -> Gateway? in
            if state.gateway == nil { state.reloadWaiting = action }
            return state.gateway
        }
        if let gateway { reloads.async { action(gateway) } }
    }

    func start(_ gateway: Gateway) {
        let waiting = state.withLock { state in
            state.gateway = gateway
            defer { state.reloadWaiting = nil }
            return state.reloadWaiting
        }
        if let waiting { reloads.async { waiting(gateway) } }
    }
}
