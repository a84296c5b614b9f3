import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// The gateway as the admin listener sees it.
extension Gateway: AdminBackend {
    public var destinationStatuses: [DestinationStatus] { delivery.status }

    public func event(id: String) async -> EventDeliveryState? { await delivery.state(ofEvent: id) }

    public func events(ofSubscription originalTransactionId: String) async -> [EventDeliveryState] {
        await delivery.events(ofSubscription: originalTransactionId, limit: 100)
    }

    public func searchEvents(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError>? {
        await delivery.searchEvents(query, limit: limit, after: cursor)
    }

    public var deadLetters: any DeadLetterArchive { delivery.deadLetterArchive }

    public func replay(deadLetterId: String, force: Bool) async -> ReplayOutcome {
        await delivery.replay(deadLetterId: deadLetterId, force: force)
    }

    public func redeliver(eventId: String, destination: String) async -> RedeliveryOutcome {
        await delivery.redeliver(eventId: eventId, destination: destination)
    }

    public func replayAll(_ query: DeadLetterQuery, force: Bool) async -> BulkReplayResult {
        await delivery.replayAll(query, force: force)
    }

    public func setPaused(_ pause: Bool, destination: String) async -> PauseOutcome {
        await delivery.setPaused(pause, destination: destination)
    }

    public var isReady: Bool { store.isWritable }

    public var clusterStatus: JSONValue? {
        get async { await clusterStatusJSON() }
    }

    private func clusterStatusJSON() async -> JSONValue? {
        guard let cluster, case .object(var status) = await cluster.delivery.statusJSON(cluster.configuration) else { return nil }
        // What the watch saw last: whether the server answers in time, and why it is not
        // durable (nil when it is).
        status["answering"] = .bool(cluster.watch.isAnswering)
        status["durabilityProblem"] = .string(cluster.watch.acceptanceRefusal)
        let seal = cluster.delivery.seal
        status["integrity"] = .string(!seal.isOn ? "off" : cluster.configuration.acceptsUnsealed ? "sealed, unsealed accepted" : "sealed")
        let epoch = cluster.epoch.current
        status["epoch"] = .string(epoch.epoch)
        status["epochSeen"] = .string(epoch.lastSeen?.iso8601)
        status["resets"] = serverResets.json
        return .object(status)
    }

    public var alerts: [String] { serverResets.alerts }

    public var intakeFigures: [IntakeFigures] { metrics.intake.figures(at: clock.now()) }

    public var reconciliations: [JSONValue] {
        reconcilers.current.map { reconciler in
            .object(JSONObject([
                ("app", .string(reconciler.bundleId)),
                ("environment", .string(reconciler.environment.rawValue)),
                ("lastSuccess", .string(reconciler.record.lastSuccess.current?.iso8601)),
                ("lastRun", reconciler.record.lastPass.current?.json ?? .null),
                ("lastProbe", reconciler.record.lastProbe.current?.json ?? .null),
            ]))
        }
    }

    public func reconcile(app: String, environment: AppStoreEnvironment, since: Duration?, onlyFailures: Bool, dryRun: Bool,
                          completion: @escaping @Sendable (JSONValue?) -> Void) {
        guard let reconciler = reconcilers.find(bundleId: app, environment: environment) else { return completion(nil) }
        reconciler.reconcile(ReconcileRequest(since: since, onlyFailures: onlyFailures, dryRun: dryRun)) { completion($0.json) }
    }

    public func probe(app: String, environment: AppStoreEnvironment, timeout: Duration, completion: @escaping @Sendable (JSONValue?) -> Void) {
        guard let reconciler = reconcilers.find(bundleId: app, environment: environment) else { return completion(nil) }
        reconciler.probe(timeout: timeout) { completion($0.json) }
    }

    /// Starts the admin listener (API, dead-letter page, /metrics) on the configured address,
    /// with the configured token or the one generated into DATA/admin.token.
    static func startAdmin(_ gateway: Gateway, configuration: GatewayConfiguration, logger: Logger) throws(GatewayError) -> AdminServer {
        let token: String
        do {
            token = try AdminToken.resolve(configured: configuration.adminToken?.value, dataDirectory: configuration.dataDirectory)
        } catch {
            throw GatewayError("cannot set up the admin token: \(error)")
        }
        let registry = gateway.metrics.registry
        let server = AdminServer(
            backend: gateway, token: token, configuration: HTTPServerConfiguration(address: configuration.admin.description),
            metrics: { [delivery = gateway.delivery] in
                // The dead-letter gauge shows the counts as last read: read them first (in
                // cluster mode, from the server) without holding a thread.
                await delivery.refreshDeadLetterCounts()
                return registry.render()
            }, metricsContentType: MetricsRegistry.contentType, logger: logger,
            sessionsFile: configuration.dataDirectory + "/admin.sessions", trustedProxies: configuration.trustedProxies)
        let port: Int
        do {
            port = try server.start()
        } catch {
            throw GatewayError("cannot listen on the admin address \(configuration.admin): \(error)")
        }
        logger.info("listening", [
            ("listener", "admin"), ("address", address(configuration.admin, port: port)),
            ("token", configuration.adminToken == nil ? AdminToken.path(dataDirectory: configuration.dataDirectory) : "from the configuration"),
        ])
        return server
    }
}
