import Foundation
import StoreRelayVerification
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// The running gateway: journal (or cluster server), fan-out, verification pipeline and
/// public listener.
///
/// Start order is journal → delivery (resuming what the journal holds) → verifier →
/// listener, so nothing is accepted before it can be stored and delivered; `stop` runs the
/// other way round (SPEC "Operations"). In cluster mode the shared server takes the
/// journal's place (SPEC "Cluster mode").
public final class Gateway: Sendable {
    /// The configuration in force (replaced by a successful reload).
    public var configuration: GatewayConfiguration { current.current }
    let current: Locked<GatewayConfiguration>
    let logger: Logger
    let clock: any TimeSource
    /// Single-node mode's journal; nil in cluster mode.
    let journal: Journal?
    let delivery: any DeliveryService
    let store: any NotificationStore
    /// Cluster mode's connection and delivery; nil in single-node mode.
    let cluster: ClusterParts?
    let intake: NotificationIntake
    /// Google Play pushes (`path PATH play`) and the key set they are verified with.
    let play: PlayIntake
    /// Also holds the span exporter (`tracing otlp`), which the intake and delivery record into.
    let metrics: GatewayMetrics
    /// The gateway's own events (`operational-events`), raised by the detectors below.
    let operational: OperationalEvents
    /// Notices an app and environment that went silent (`intake.silent`).
    let intakeWatch: IntakeSilenceWatch
    /// Notices the data directory's disk filling up (`disk.low`).
    let diskWatch: DiskSpaceWatch
    let hooks: GatewayTestHooks
    /// The apps and environments reconciled with Apple's Notification History.
    let reconcilers: Reconcilers
    /// Cluster mode: the losses of the server's data noticed, and their recovery.
    let serverResets: ServerResets
    private let publicServer: HTTPServer
    /// The public listener's routes, rebuilt when a reload changes the notification paths.
    let publicRoutes: Locked<HTTPRoutes>
    /// Set at the first moment of `stop`: `/readyz` answers 503 from then on.
    let stopping = Locked(false)
    /// Reloads, one at a time (each waits for retired destinations to close).
    let reloads = OneAtATime(queue: DispatchQueue(label: "storerelay.reload"))
    private let journalProbe: JournalProbe?
    private let memoryTrimmer: MemoryTrimmer?
    /// The admin listener, started last: it serves a gateway that is fully up.
    private let adminServer = Locked<AdminServer?>(nil)

    /// Loads the TLS files (when `tls` is set), opens the journal under the data directory
    /// (or connects to the cluster server and checks it), loads the trust roots and starts
    /// listening; then calls `completion` with the running gateway, or why it could not
    /// start. Waiting for the cluster server holds no thread; `completion` runs on a queue
    /// of the start's own (at once in single-node mode, on the caller's thread).
    public static func start(configuration: GatewayConfiguration, logger: Logger, clock: any TimeSource = WallClock(),
                             hooks: GatewayTestHooks = GatewayTestHooks(),
                             completion: @escaping @Sendable (Result<Gateway, GatewayError>) -> Void) {
        let publicTLS: HTTPServerTLS?
        do throws(GatewayError) {
            // Before the journal opens: a bad certificate or key must not leave anything behind.
            publicTLS = try loadTLS(configuration)
            try DataDirectoryModes.tighten(configuration, logger: logger)
        } catch {
            return completion(.failure(error))
        }
        let assemble: @Sendable (ClusterConnection?) -> Void = { connection in
            completion(Result { () throws(GatewayError) in
                try Gateway(configuration: configuration, logger: logger, clock: clock, hooks: hooks, publicTLS: publicTLS,
                            connection: connection)
            })
        }
        guard let cluster = configuration.cluster else { return assemble(nil) }
        connectCluster(cluster, logger: logger, on: DispatchQueue(label: "storerelay.start")) { connected in
            switch connected {
            case .success(let connection): assemble(connection)
            case .failure(let error): completion(.failure(error))
            }
        }
    }

    /// `connection`: cluster mode's, made by `connectCluster` (nil in single-node mode).
    private init(configuration: GatewayConfiguration, logger: Logger, clock: any TimeSource, hooks: GatewayTestHooks,
                 publicTLS: HTTPServerTLS?, connection: ClusterConnection?) throws(GatewayError) {
        precondition((configuration.cluster == nil) == (connection == nil), "cluster mode starts on a connection")
        current = Locked(configuration)
        self.logger = logger
        self.clock = clock
        metrics = GatewayMetrics(tracing: configuration.tracing, logger: logger)
        self.hooks = hooks
        let operational = OperationalEvents(clock: clock, logger: logger, batchWindow: hooks.operationalBatchWindow ?? .seconds(60))
        self.operational = operational
        intakeWatch = IntakeSilenceWatch(clock: clock, events: operational)
        diskWatch = DiskSpaceWatch(path: configuration.dataDirectory, threshold: configuration.operationalEvents.diskLow,
                                   events: operational)
        operational.setInstance(connection?.instanceId)
        // Metrics and operational events each take what they listen to.
        let observer = DeliveryObservers([metrics, operational])
        let backend = if let cluster = configuration.cluster, let connection {
            try Self.openCluster(configuration, cluster, connection: connection, clock: clock, logger: logger, metrics: metrics,
                                 observer: observer, hooks: hooks)
        } else {
            try Self.openJournal(configuration, clock: clock, logger: logger, metrics: metrics, observer: observer, hooks: hooks)
        }
        journal = backend.journal
        delivery = backend.delivery
        store = backend.store
        cluster = backend.cluster
        journalProbe = backend.journal.map { JournalProbe(journal: $0) }
        memoryTrimmer = (backend.delivery as? DeliveryEngine).map { MemoryTrimmer(delivery: $0) }
        let processor: NotificationProcessor
        do {
            processor = NotificationProcessor(
                verifier: try Self.makeVerifier(configuration, clock: clock),
                policy: AcceptancePolicy(configuration, dedupeWindow: backend.store.dedupeWindow), routes: configuration.routes)
        } catch {
            backend.close()
            throw error
        }
        intake = NotificationIntake(processor: processor, store: backend.store, clock: clock, logger: logger, metrics: metrics,
                                    intakeWatch: intakeWatch)
        do {
            play = try PlayIntake(configuration: configuration, store: backend.store, inbox: backend.playInbox, clock: clock,
                                  logger: logger, metrics: metrics, intakeWatch: intakeWatch)
        } catch {
            backend.close()
            throw error
        }
        // The engine outlives no gateway, and the intake holds the engine: the intake's
        // processor is what the closure needs, so it reaches it without holding the intake.
        delivery.reprocess.withLock { [processor = intake.processorCell] in
            $0 = { stored in try? processor.current.process(body: stored.body, pathEnvironment: nil, receivedAt: stored.receivedAt) }
        }
        serverResets = ServerResets(logger: logger, metrics: metrics, operational: operational)
        reconcilers = Reconcilers(dataDirectory: configuration.dataDirectory, intake: intake, store: backend.store, clock: clock,
                                  logger: logger, metrics: metrics, operational: operational)
        metrics.observe(intake: intakeWatch, disk: diskWatch)
        metrics.observe(play: play)
        metrics.seed(configuration)
        let reconciling: [Reconciler]
        do {
            reconciling = try reconcilers.prepare(configuration, dedupeWindow: backend.store.dedupeWindow)
        } catch {
            play.stop()
            backend.close()
            throw error
        }

        var serverConfiguration = HTTPServerConfiguration(address: configuration.listen.description)
        serverConfiguration.maxBodyBytes = configuration.maxBodySize
        serverConfiguration.readTimeout = configuration.readTimeout
        serverConfiguration.headerTimeout = configuration.headerTimeout
        serverConfiguration.minBodyRate = configuration.minBodyRate
        serverConfiguration.idleTimeout = configuration.idleTimeout
        serverConfiguration.maxConnections = configuration.maxConnections
        serverConfiguration.maxConnectionsPerAddress = configuration.maxConnectionsPerAddress
        serverConfiguration.tls = publicTLS
        let routes = Locked(Self.publicRoutes(configuration: configuration, intake: intake, play: play, store: backend.store,
                                              stopping: stopping))
        publicRoutes = routes
        publicServer = HTTPServer(configuration: serverConfiguration, logger: logger) { request, responder in
            routes.current.handle(request, responder)
        }
        let port: Int
        do {
            port = try publicServer.start()
        } catch {
            play.stop()
            backend.close()
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
            play.stop()
            publicServer.shutdown {}
            backend.close()
            throw error
        }
        // Before the first reconciliation pass, which may fail and say so.
        applyOperationalEvents(configuration, previous: nil)
        // Last: a first pass feeds the intake, which must be fully up.
        reconcilers.replace(with: reconciling, passNow: true)
        // After the reconcilers: a loss noticed at once (while this instance was down) asks
        // them to recover.
        cluster?.epoch.start { [weak self] reset in
            guard let self else { return }
            serverResets.handle(reset, reconcilers: reconcilers.current, configuration: self.configuration) {
                [reconcilers] app, environment, from, done in
                // The reconciler of now: a retry after a reload asks the new one.
                guard let reconciler = reconcilers.current.first(where: {
                    $0.bundleId == app && $0.environment.rawValue == environment
                }) else { return false }
                reconciler.recover(from: from, completion: done)
                return true
            }
        }
        logger.info("started", [
            ("data", configuration.dataDirectory), ("routes", configuration.routes.rules.count),
            ("destinations", configuration.destinations.count),
            ("journal.segments", journal.map { String($0.segments.count) } ?? "none (cluster mode)"),
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
        cluster?.epoch.stop()
        serverResets.stop()
        reconcilers.stop()
        play.stop()
        stopOperationalEvents()
        journalProbe?.stop()
        memoryTrimmer?.stop()
        publicServer.shutdown { [delivery, journal, cluster, logger, metrics] in
            delivery.stop(grace: grace) {
                // After the last attempt's span: one last batch goes, unawaited.
                metrics.spans?.stop()
                let stopped: @Sendable () -> Void = {
                    logger.info("stopped")
                    completion()
                }
                cluster?.shutdownConnections()
                delivery.eventLog?.close()
                if let journal { journal.close(completion: stopped) } else { stopped() }
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
