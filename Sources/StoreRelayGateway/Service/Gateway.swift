import Foundation
import StoreRelayVerification
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// The running gateway: journal, fan-out, verification pipeline and public listener.
///
/// Start order is journal → delivery (resuming what the journal holds) → verifier →
/// listener, so nothing is accepted before it can be stored and delivered; `stop` runs the
/// other way round (SPEC "Operations").
public final class Gateway: Sendable {
    /// The configuration in force (replaced by a successful reload).
    public var configuration: GatewayConfiguration { current.current }
    let current: Locked<GatewayConfiguration>
    let logger: Logger
    let clock: any TimeSource
    let journal: Journal
    let delivery: DeliveryEngine
    let intake: NotificationIntake
    let metrics = GatewayMetrics()
    /// The apps and environments reconciled with Apple's Notification History.
    let reconcilers: Reconcilers
    private let publicServer: HTTPServer
    /// The public listener's routes, rebuilt when a reload changes the notification paths.
    let publicRoutes: Locked<HTTPRoutes>
    /// Set at the first moment of `stop`: `/readyz` answers 503 from then on.
    let stopping = Locked(false)
    private let journalProbe: JournalProbe
    private let memoryTrimmer: MemoryTrimmer
    /// The admin listener, started last: it serves a gateway that is fully up.
    private let adminServer = Locked<AdminServer?>(nil)

    /// Loads the TLS files (when `tls` is set), opens the journal under the data directory,
    /// loads the trust roots and starts listening.
    public init(configuration: GatewayConfiguration, logger: Logger, clock: any TimeSource = WallClock()) throws(GatewayError) {
        current = Locked(configuration)
        self.logger = logger
        self.clock = clock
        // Before the journal opens: a bad certificate or key must not leave anything behind.
        let publicTLS = try Self.loadTLS(configuration)
        let journalDirectory = configuration.dataDirectory + "/journal"
        do {
            var options = JournalOptions()
            options.dedupeRetention = configuration.dedupeWindow
            options.clock = clock
            journal = try Journal.open(directory: journalDirectory, options: options, logger: logger)
        } catch {
            throw GatewayError("cannot open the journal in \(journalDirectory): \(error)")
        }
        for issue in journal.recoveryIssues {
            logger.warning("journal recovery", [("issue", "\(issue)")])
        }
        journalProbe = JournalProbe(journal: journal)
        do {
            let deadLetters = try DeadLetterStore.open(directory: configuration.dataDirectory + "/dead-letters", logger: logger)
            delivery = try DeliveryEngine(configuration: configuration, journal: journal, deadLetters: deadLetters,
                                          clock: clock, logger: logger, observer: metrics,
                                          replayDirectory: configuration.dataDirectory + "/replays")
        } catch {
            journal.close()
            throw GatewayError("cannot open the destinations: \(error)")
        }
        do {
            try delivery.resume(from: journal.recovered)
            delivery.resumeReplays()
        } catch {
            delivery.stop {}
            journal.close()
            throw GatewayError("cannot resume deliveries from the journal in \(journalDirectory): \(error)")
        }
        memoryTrimmer = MemoryTrimmer(delivery: delivery)
        journal.releaseRecoveredRecords()
        let processor: NotificationProcessor
        do {
            processor = NotificationProcessor(
                verifier: try Self.makeVerifier(configuration, clock: clock),
                policy: AcceptancePolicy(configuration), routes: configuration.routes)
        } catch {
            delivery.stop {}
            journal.close()
            throw error
        }
        intake = NotificationIntake(processor: processor, journal: journal, delivery: delivery, clock: clock,
                                    logger: logger, metrics: metrics)
        metrics.observe(delivery: delivery, journal: journal, journalDirectory: journalDirectory)
        // The engine outlives no gateway, and the intake holds the engine: the intake's
        // processor is what the closure needs, so it reaches it without holding the intake.
        delivery.reprocess.withLock { [processor = intake.processorCell] in
            $0 = { stored in try? processor.current.process(body: stored.body, pathEnvironment: nil, receivedAt: stored.receivedAt) }
        }
        reconcilers = Reconcilers(dataDirectory: configuration.dataDirectory, intake: intake, journal: journal, clock: clock,
                                  logger: logger, metrics: metrics)
        let reconciling: [Reconciler]
        do {
            reconciling = try reconcilers.prepare(configuration, dedupeWindow: configuration.dedupeWindow)
        } catch {
            delivery.stop {}
            journal.close()
            throw error
        }

        var serverConfiguration = HTTPServerConfiguration(address: configuration.listen.description)
        serverConfiguration.maxBodyBytes = configuration.maxBodySize
        serverConfiguration.readTimeout = configuration.readTimeout
        serverConfiguration.idleTimeout = configuration.idleTimeout
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.maxConnectionsPerAddress = configuration.maxConnectionsPerAddress
        serverConfiguration.tls = publicTLS
        let routes = Locked(Self.publicRoutes(configuration: configuration, intake: intake, journal: journal, stopping: stopping))
        publicRoutes = routes
        publicServer = HTTPServer(configuration: serverConfiguration, logger: logger) { request, responder in
            routes.current.handle(request, responder)
        }
        let port: Int
        do {
            port = try publicServer.start()
        } catch {
            delivery.stop {}
            journal.close()
            throw GatewayError("cannot listen on \(configuration.listen): \(error)")
        }
        logger.info("listening", [
            ("listener", "public"), ("address", Self.address(configuration.listen, port: port)),
            ("paths", configuration.paths.map(\.path).joined(separator: " ")),
            ("tls", publicTLS == nil ? "no" : "yes"),
        ])
        for warning in configuration.warnings { logger.warning("configuration", [("warning", warning)]) }
        do {
            let admin = try Self.startAdmin(self, configuration: configuration, logger: logger)
            adminServer.withLock { $0 = admin }
        } catch {
            publicServer.shutdown {}
            delivery.stop {}
            journal.close()
            throw error
        }
        // Last: a first pass feeds the intake, which must be fully up.
        reconcilers.replace(with: reconciling, passNow: true)
        logger.info("started", [
            ("data", configuration.dataDirectory), ("routes", String(configuration.routes.rules.count)),
            ("destinations", String(configuration.destinations.count)),
            ("journal.segments", String(journal.segments.count)),
        ])
    }

    /// The graceful drain: `/readyz` turns 503 at once (so a load balancer stops sending),
    /// the listeners stop accepting and answer what is in flight, deliveries in flight get
    /// `shutdown-grace` to finish, then the journal is flushed and `completion` runs. What is
    /// unfinished resumes from the journal at the next start.
    public func stop(completion: @escaping @Sendable () -> Void) {
        let alreadyStopping = stopping.withLock { stopping in
            defer { stopping = true }
            return stopping
        }
        guard !alreadyStopping else { return }
        let grace = current.current.shutdownGrace
        logger.info("stopping", [("shutdown.grace", ConfigFormat.duration(grace))])
        adminServer.current?.shutdown()
        reconcilers.stop()
        journalProbe.stop()
        memoryTrimmer.stop()
        publicServer.shutdown { [delivery, journal, logger] in
            delivery.stop(grace: grace) {
                journal.close {
                    logger.info("stopped")
                    completion()
                }
            }
        }
    }

    static func address(_ listen: ListenAddress, port: Int) -> String {
        listen.with(port: UInt16(port)).description
    }
}

/// Why the gateway could not start, as one sentence.
public struct GatewayError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
