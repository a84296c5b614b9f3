internal import CStoreRelayShims
import Foundation
import StoreRelayCluster
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// What stores and delivers notifications, in the mode the configuration chose: the journal
/// and its delivery engine (single-node, the default), or the shared server (cluster mode).
struct GatewayBackend: Sendable {
    var store: any NotificationStore
    var delivery: any DeliveryService
    /// Single-node mode's journal.
    var journal: Journal?
    /// Cluster mode's parts.
    var cluster: ClusterParts?
    /// Where Google Play pushes wait for the Developer API: beside the journal, or on the server.
    var playInbox: any PlayEnrichmentInbox

    /// Releases what was opened, when start-up fails after it.
    func close() {
        delivery.stop(grace: .zero) {}
        delivery.eventLog?.close()
        journal?.close()
        cluster?.shutdownConnections()
    }
}

/// Cluster mode's connection, delivery and settings, for status and shutdown.
struct ClusterParts: Sendable {
    var client: RedisClient
    /// Readiness and durability while connected, on a connection of its own.
    var watch: ServerWatch
    var delivery: ClusterDelivery
    var configuration: ClusterConfiguration
    /// Notices a server that lost its data; started once the reconcilers are.
    var epoch: ClusterEpoch
    /// The acknowledgements' extra connections (`ClusterAcknowledgement`).
    var acknowledgementLanes: [RedisClient]

    func shutdownConnections() {
        watch.stop()
        client.shutdown()
        for lane in acknowledgementLanes { lane.shutdown() }
    }
}

/// Cluster mode's connection, made and checked (`Gateway.connectCluster`) before the
/// gateway is assembled on it.
struct ClusterConnection: Sendable {
    var instanceId: String
    var redis: RedisConfiguration
    var client: RedisClient
    var watch: ServerWatch
    var claim: InstanceClaim
}

extension Gateway {
    /// Opens the journal under the data directory and resumes its deliveries.
    static func openJournal(_ configuration: GatewayConfiguration, clock: any TimeSource, logger: Logger,
                            metrics: GatewayMetrics, observer: any DeliveryObserver,
                            hooks: GatewayTestHooks) throws(GatewayError) -> GatewayBackend {
        let journalDirectory = configuration.dataDirectory + "/journal"
        let journal: Journal
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
        let eventLog: EventLog
        do {
            var options = EventLogOptions()
            options.retention = configuration.eventLogRetention
            options.clock = clock
            eventLog = try EventLog.open(directory: configuration.dataDirectory + "/event-log", options: options, logger: logger)
        } catch {
            journal.close()
            throw GatewayError("cannot open the event log in \(configuration.dataDirectory)/event-log: \(error)")
        }
        for note in eventLog.recoveryNotes { logger.warning("event log recovery", [("issue", note)]) }
        let delivery: DeliveryEngine
        do {
            let deadLetters = try DeadLetterStore.open(directory: configuration.dataDirectory + "/dead-letters", logger: logger)
            delivery = try DeliveryEngine(configuration: configuration, journal: journal, deadLetters: deadLetters,
                                          clock: clock, logger: logger, observer: observer,
                                          checkpointPause: hooks.checkpointPause,
                                          replayDirectory: configuration.dataDirectory + "/replays",
                                          pausedFile: configuration.dataDirectory + "/paused-destinations.json",
                                          eventLog: eventLog)
        } catch {
            eventLog.close()
            journal.close()
            throw GatewayError("cannot open the destinations: \(error)")
        }
        do {
            try delivery.resume()
            delivery.resumeReplays()
        } catch {
            delivery.stop {}
            eventLog.close()
            journal.close()
            throw GatewayError("cannot resume deliveries from the journal in \(journalDirectory): \(error)")
        }
        journal.releaseRecoveredRecords()
        // What the start read (the newest segment, the tail) goes back to the system now: a
        // backlog keeps the gateway busy, so the trimmer's end-of-busy trim may be far off.
        _ = storerelay_malloc_trim()
        metrics.observe(delivery: delivery, journal: journal, journalDirectory: journalDirectory)
        return GatewayBackend(store: JournalStore(journal: journal, delivery: delivery), delivery: delivery, journal: journal,
                              playInbox: LocalPlayEnrichmentInbox(directory: configuration.dataDirectory + "/play-enrichment", logger: logger))
    }

    /// Connects to the cluster server and checks it, then calls `completion` on `queue`
    /// with the connection, or with why the start is refused. A server that is not durable,
    /// can evict keys, or lacks WAITAOF for `wait-replicas` refuses the start with the
    /// setting named, as does an instance id another live instance holds; one that is
    /// unreachable does not: the instance answers 503 (and `/readyz` 503) until it is back.
    /// A `ServerWatch` keeps checking while connected. Nothing holds a thread while the
    /// server, or a lapsing claim, is waited for.
    static func connectCluster(_ cluster: ClusterConfiguration, logger: Logger, on queue: DispatchQueue,
                               completion: @escaping @Sendable (Result<ClusterConnection, GatewayError>) -> Void) {
        let instanceId = cluster.instanceId ?? defaultInstanceId()
        var redis = RedisConfiguration(url: cluster.url)
        redis.topology = cluster.topology
        redis.slotKey = ClusterKeys.prefix
        redis.caFile = cluster.caFile
        redis.clientCertificateFile = cluster.clientCertificate?.certificateFile
        redis.clientKeyFile = cluster.clientCertificate?.privateKeyFile
        redis.clientName = "storerelay-" + instanceId
        redis.logger = logger
        // WAITAOF holds its reply for up to wait-timeout: a shorter command timeout would
        // drop the connection under every acknowledgement waiting for a slow replica.
        redis.commandTimeout = max(redis.commandTimeout, cluster.waitTimeout + .seconds(2))
        let requirements = ServerRequirements(cluster)
        if !requirements.isEmpty {
            redis.connectionChecks = requirements.checks
            redis.acceptConnection = requirements.refusal
        }
        for warning in cluster.warnings { logger.warning("cluster: " + warning) }
        // After the server's own checks: nothing is accepted or delivered while another live
        // instance holds this id (the watch, made without these checks, only reads).
        let claim = InstanceClaim(instanceId: instanceId)
        claim.guardConnections(of: &redis)
        let client = RedisClient(configuration: redis)
        let watch = ServerWatch(server: redis, durability: requirements.durability, logger: logger)
        client.observeConnection { [weak client] connected, error in
            if connected {
                // It passed its connection checks: a durability verdict until the watch's.
                watch.connectionChecked()
                let node = client?.connectedNode.map { [("cluster.node", $0.description)] } ?? []
                logger.notice("cluster server connected", [("cluster.url", cluster.server)] + node)
            } else {
                logger.error("cluster server lost; notifications are answered 503 until it is back",
                             [("cluster.url", cluster.server), ("error", error?.message ?? "")])
            }
        }
        client.start()
        watch.start()
        let connection = ClusterConnection(instanceId: instanceId, redis: redis, client: client, watch: watch, claim: claim)
        let deadline = ContinuousClock.now + redis.connectTimeout + .seconds(1)
        let claimLapses = InstanceClaim.lifetime + redis.reconnectMaximum + redis.connectTimeout
        Recheck.until(deadline, on: queue, { client.isConnected || client.lastError != nil }) { _ in
            // Held by an instance that was killed: its claim lapses within its lifetime; the
            // client retries meanwhile (at most `reconnectMaximum` apart).
            claim.awaitRelease(by: client, timeout: claimLapses, logger: logger, on: queue) {
                if let error = client.lastError, error.code == .refused {
                    watch.stop()
                    client.shutdown()
                    if claim.isHeldElsewhere { return completion(.failure(GatewayError("cluster: \(error.message)"))) }
                    return completion(.failure(GatewayError("cluster server \(cluster.url) refused: \(error.message)")))
                }
                // Ready as soon as connected: the watch's own connection follows within moments.
                Recheck.until(deadline, on: queue, { !client.isConnected || watch.isAnswering }) { _ in
                    completion(.success(connection))
                }
            }
        }
    }

    /// Starts this instance's consumers on a connection `connectCluster` made.
    static func openCluster(_ configuration: GatewayConfiguration, _ cluster: ClusterConfiguration, connection: ClusterConnection,
                            clock: any TimeSource, logger: Logger, metrics: GatewayMetrics,
                            observer: any DeliveryObserver, hooks: GatewayTestHooks) throws(GatewayError) -> GatewayBackend {
        let (instanceId, redis, client, watch) = (connection.instanceId, connection.redis, connection.client, connection.watch)
        let delivery: ClusterDelivery
        do {
            delivery = try ClusterDelivery(configuration: configuration, cluster: cluster, client: client, instanceId: instanceId,
                                           clock: clock, logger: logger, observer: observer, claim: connection.claim)
        } catch {
            watch.stop()
            client.shutdown()
            throw GatewayError("cannot open the destinations: \(error)")
        }
        delivery.start()
        let lanes = (1..<acknowledgementConnections).map { lane in
            var named = redis
            named.clientName = redis.clientName.map { $0 + "-ack-\(lane)" }
            return RedisClient(configuration: named)
        }
        for lane in lanes { lane.start() }
        let acknowledgement = ClusterAcknowledgement(
            client: client, lanes: lanes, dedupeWindow: cluster.dedupeWindow, recentEvents: configuration.recentEvents,
            waitReplicas: cluster.waitReplicas, waitTimeout: cluster.waitTimeout, seal: delivery.seal, clock: clock)
        metrics.observe(cluster: delivery, client: client, watch: watch)
        let epoch = ClusterEpoch(client: client, clock: clock, stateFile: configuration.dataDirectory + "/cluster-epoch.json", logger: logger)
        logger.info("cluster mode", [("cluster.url", cluster.server), ("instance.id", instanceId),
                                     ("connected", client.isConnected ? "yes" : "not yet")])
        let playInbox = ClusterInbox(client: client, seal: delivery.seal, waitReplicas: cluster.waitReplicas,
                                     waitTimeout: cluster.waitTimeout, claim: hooks.playInboxClaim ?? .seconds(120), clock: clock,
                                     logger: logger)
        return GatewayBackend(
            store: ClusterStore(client: client, watch: watch, acknowledgement: acknowledgement, delivery: delivery,
                                dedupeWindow: cluster.dedupeWindow),
            delivery: delivery, cluster: ClusterParts(client: client, watch: watch, delivery: delivery, configuration: cluster, epoch: epoch,
                                                         acknowledgementLanes: lanes),
            playInbox: ClusterPlayEnrichmentInbox(inbox: playInbox, watch: watch))
    }

    /// Connections acknowledgements spread over in cluster mode, the shared client's included:
    /// with `appendfsync always` each lets the server take one more record per fsync.
    static let acknowledgementConnections = 8

    /// `hostname-pid`: unique per live instance on one host, and readable in status.
    static func defaultInstanceId() -> String {
        let host = ProcessInfo.processInfo.hostName.split(separator: ".").first.map(String.init) ?? "storerelay"
        let safe = String(host.unicodeScalars.map { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "-") ? Character(scalar) : "-"
        }.prefix(48))
        return (safe.isEmpty ? "storerelay" : safe) + "-" + String(ProcessInfo.processInfo.processIdentifier)
    }
}
