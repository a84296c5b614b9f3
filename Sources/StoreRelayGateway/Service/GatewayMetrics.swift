import StoreRelayCluster
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// Every metric the gateway exposes on `/metrics` (SPEC "Operations"), registered once.
final class GatewayMetrics: Sendable {
    let registry = MetricsRegistry()
    private let received: Counter
    private let acknowledgement: Histogram
    private let deliveries: Counter
    private let deliverySeconds: Histogram
    private let deadLettersCreated: Counter
    private let reconcileRuns: Counter
    private let reconcileRecovered: Counter
    private let playEnrichments: Counter
    private let clusterClaims: Counter
    private let clusterLost: Counter
    private let clusterTampered: Counter
    private let clusterResets: Counter
    /// Spans lost: the buffer was full, or the collector did not take a batch.
    let spansDropped: Counter
    /// Where spans go (`tracing otlp URL`); nil: tracing is off and nothing is recorded.
    let spans: SpanExporter?
    /// The page's intake panel: each app and environment over the last 24 hours.
    let intake = IntakeTally()
    private let operationalEvents: Counter

    init(tracing: TracingConfiguration? = nil, spanLimits: SpanExporter.Limits = SpanExporter.Limits(),
         logger: Logger = .disabled) {
        received = registry.counter(
            "storerelay_notifications_received_total",
            help: "Notifications posted to the public listener, by app (bundle id; unknown when unreadable), environment, version (1 or 2) and outcome.",
            labels: ["app", "environment", "version", "outcome"])
        acknowledgement = registry.histogram(
            "storerelay_acknowledgement_seconds",
            help: "Time from a complete notification request to its answer (verification and journal fsync included).",
            labels: ["outcome"], buckets: MetricBuckets.latencySeconds)
        deliveries = registry.counter(
            "storerelay_deliveries_total",
            help: "Delivery attempts by destination and outcome (delivered, retry, exhausted: the last the budget allowed, rejected).",
            labels: ["destination", "outcome"])
        deliverySeconds = registry.histogram(
            "storerelay_delivery_seconds", help: "Duration of delivery attempts by destination.",
            labels: ["destination"], buckets: MetricBuckets.latencySeconds)
        deadLettersCreated = registry.counter(
            "storerelay_dead_letters_created_total", help: "Dead letters written, by destination and reason.",
            labels: ["destination", "reason"])
        reconcileRuns = registry.counter(
            "storerelay_reconcile_runs_total", help: "Reconciliation passes with Apple's Notification History, by app, environment and outcome.",
            labels: ["app", "environment", "outcome"])
        reconcileRecovered = registry.counter(
            "storerelay_reconcile_recovered_total",
            help: "Notifications recovered from Apple's Notification History that the gateway had missed, by app and environment.",
            labels: ["app", "environment"])
        playEnrichments = registry.counter(
            "storerelay_play_enrichments_total",
            help: "Google Play events enriched from the Developer API, by app (package name) and outcome (ok, test_purchase, failed).",
            labels: ["app", "outcome"])
        clusterClaims = registry.counter(
            "storerelay_cluster_claims_total",
            help: "Cluster mode: deliveries taken over from an instance that left them idle for claim-after, by destination.",
            labels: ["destination"])
        clusterLost = registry.counter(
            "storerelay_cluster_lost_total",
            help: "Cluster mode: acknowledged events found deleted from a queue while pending, by destination (must stay 0).",
            labels: ["destination"])
        clusterTampered = registry.counter(
            "storerelay_cluster_tampered_total",
            help: "Cluster mode: records on the server that failed their cluster-key check and were not acted on, by record kind (must stay 0).",
            labels: ["record"])
        clusterResets = registry.counter(
            "storerelay_cluster_server_resets_total",
            help: "Cluster mode: times this instance found the server's epoch missing or changed (the server lost its data; must stay 0).")
        let dropped = registry.counter(
            "storerelay_trace_spans_dropped_total",
            help: "Spans not exported, by reason: buffer_full (the collector fell behind) or export_failed (it refused or was unreachable).",
            labels: ["reason"])
        spansDropped = dropped
        spans = tracing.map { tracing in
            // Both series show as 0 from the start: an alert on them needs them present.
            let full = dropped.series(["buffer_full"])
            let failed = dropped.series(["export_failed"])
            return SpanExporter(url: tracing.url, caFile: tracing.caFile, limits: spanLimits,
                                serviceVersion: StoreRelayVersion.current, logger: logger) { count, reason in
                (reason == "buffer_full" ? full : failed).increment(by: Double(count))
            }
        }
        operationalEvents = registry.counter(
            "storerelay_operational_events_total",
            help: "Operational events by outcome: delivered to the operational-events destination, or dropped (given up on, or the queue was full).",
            labels: ["outcome"])
        for outcome in ["delivered", "dropped"] { _ = operationalEvents.series([outcome]) }
        registry.gauge("storerelay_build_info", help: "Always 1; the version label says which StoreRelay is running.",
                       labels: ["version"]) {
            [([StoreRelayVersion.current], 1)]
        }
    }

    /// Shows 0 for every series the configuration implies before anything happens, so a
    /// series never appears from nothing (a rate over it would miss its first increase) and
    /// an alert on it has a value to compare from the start.
    func seed(_ configuration: GatewayConfiguration) {
        for app in configuration.apps {
            for environment in configuration.environments {
                for outcome in ["accepted", "duplicate", "quarantined"] {
                    _ = received.series([app.bundleId, environment.rawValue, "2", outcome])
                }
            }
        }
        // Google Play pushes are production until enrichment says otherwise; version "play".
        for app in configuration.playApps {
            for outcome in ["accepted", "duplicate", "quarantined"] { _ = received.series([app.packageName, "production", "play", outcome]) }
        }
        // A refused notification was not read far enough to name its app or environment.
        for outcome in ["malformed", "signature", "unavailable"] { _ = received.series(["unknown", "unknown", "unknown", outcome]) }
        for destination in configuration.destinations {
            for outcome in ["delivered", "retry", "exhausted", "rejected"] { _ = deliveries.series([destination.name, outcome]) }
            for reason in [DeadLetter.Reason.exhausted, .rejected] { _ = deadLettersCreated.series([destination.name, reason.rawValue]) }
        }
    }

    /// An operational event was delivered or dropped (`OperationalEventQueue`).
    func operationalEvent(_ outcome: String) {
        operationalEvents.increment([outcome])
    }

    /// The intake's last received times and the data directory's free space.
    func observe(intake: IntakeSilenceWatch, disk: DiskSpaceWatch) {
        registry.gauge("storerelay_last_received_timestamp_seconds",
                       help: "UNIX time of the last notification accepted, by app and environment (since this instance started).",
                       labels: ["app", "environment"]) {
            intake.lastReceived.map { pair, at in ([pair.app, pair.environment], Double(at.milliseconds) / 1000) }
        }
        registry.gauge("storerelay_data_free_bytes",
                       help: "Free bytes on the data directory's file system, as of the last check (disk-low compares with it).") {
            disk.freeBytes.map { [([], Double($0))] } ?? []
        }
    }

    /// Google Play pushes held for enrichment: a number that keeps growing means the Developer
    /// API is not answering (each push still goes out, without the answer, after 10 minutes).
    func observe(play: PlayIntake) {
        registry.gauge("storerelay_play_enrichment_pending",
                       help: "Google Play pushes acknowledged and waiting for the Developer API (in cluster mode, this instance's).") {
            [([], Double(play.enrichmentsPending))]
        }
    }

    /// The cluster server was found to have lost its data (`ClusterEpoch`).
    func serverReset() {
        clusterResets.increment([])
    }

    /// One Google Play enrichment finished (`PlayEnrichmentOutcome.label`).
    func playEnriched(app: String, outcome: String) {
        playEnrichments.increment([app, outcome])
    }

    /// Shows 0 for each outcome of `app` and `environment`'s passes before the first one.
    func seedReconciliation(app: String, environment: String) {
        for outcome in ["success", "failed"] { _ = reconcileRuns.series([app, environment, outcome]) }
        _ = reconcileRecovered.series([app, environment])
    }

    func reconciliationFinished(app: String, environment: String, outcome: String, recovered: Int) {
        reconcileRuns.increment([app, environment, outcome])
        reconcileRecovered.increment([app, environment], by: Double(recovered))
    }

    /// The time of each app and environment's last successful reconciliation.
    func observe(reconcilers: @escaping @Sendable () -> [Reconciler]) {
        registry.gauge("storerelay_reconcile_last_success_timestamp_seconds",
                       help: "UNIX time of the last successful reconciliation, by app and environment (0: none yet).",
                       labels: ["app", "environment"]) {
            // 0 rather than no series before the first success: "never" must age like a
            // stale success does, or an app whose every pass fails would never alert.
            reconcilers().map { reconciler in
                ([reconciler.bundleId, reconciler.environment.rawValue],
                 reconciler.record.lastSuccess.current.map { Double($0.milliseconds) / 1000 } ?? 0)
            }
        }
    }

    /// Gauges read at scrape time from the running parts (single-node mode).
    func observe(delivery: DeliveryEngine, journal: Journal, journalDirectory: String) {
        observe(delivery: delivery)
        registry.gauge("storerelay_oldest_pending_seconds",
                       help: "Age of the oldest event not yet delivered, by destination (0 when none; cluster mode: the oldest pending entry).",
                       labels: ["destination"]) {
            let now = Timestamp.now()
            return delivery.status.map { status in
                ([status.name], status.oldestPendingSince.map { Double(max(0, now.milliseconds - $0.milliseconds)) / 1000 } ?? 0)
            }
        }
        registry.gauge("storerelay_journal_segments", help: "Journal segments on disk.") {
            [([], Double(journal.segments.count))]
        }
        registry.gauge("storerelay_journal_bytes", help: "Bytes of journal segments on disk.") {
            let names = (try? PrivateFiles.listDirectory(journalDirectory)) ?? []
            let bytes = names.filter { $0.hasSuffix(".log") }.reduce(0) { total, name in
                total + (PrivateFiles.fileSize(journalDirectory + "/" + name) ?? 0)
            }
            return [([], Double(bytes))]
        }
        registry.gauge("storerelay_journal_writable", help: "1 when the journal can write, else 0.") {
            [([], journal.isWritable ? 1 : 0)]
        }
    }

    /// Gauges every mode has: each destination's queue, attempts, breaker and dead letters.
    private func observe(delivery: any DeliveryService) {
        registry.gauge("storerelay_queue_depth", help: "Events waiting for their next attempt, by destination.",
                       labels: ["destination"]) {
            delivery.status.map { ([$0.name], Double($0.queueDepth)) }
        }
        registry.gauge("storerelay_queue_parked",
                       help: "Of the waiting events, those whose body stays in the journal until due, by destination.",
                       labels: ["destination"]) {
            delivery.status.map { ([$0.name], Double($0.parked)) }
        }
        registry.gauge("storerelay_in_flight", help: "Delivery attempts in flight, by destination.", labels: ["destination"]) {
            delivery.status.map { ([$0.name], Double($0.inFlight)) }
        }
        registry.gauge("storerelay_breaker_state",
                       help: "Circuit breaker by destination: 0 closed, 1 half-open, 2 open.", labels: ["destination"]) {
            delivery.status.map { status in
                let value: Double = switch status.breaker {
                case .closed: 0
                case .halfOpen: 1
                case .open: 2
                }
                return ([status.name], value)
            }
        }
        registry.gauge("storerelay_destination_paused",
                       help: "1 while an operator has paused the destination (no attempt starts, its backlog waits), else 0.",
                       labels: ["destination"]) {
            delivery.status.map { ([$0.name], $0.paused ? 1 : 0) }
        }
        registry.gauge("storerelay_dead_letters", help: "Dead letters in the store, by destination (empty: unrouted and quarantined).",
                       labels: ["destination"]) {
            // Every destination, 0 when it has none: a purge must not make the series vanish.
            var counts = delivery.deadLetterCounts
            for status in delivery.status where counts[status.name] == nil { counts[status.name] = 0 }
            if counts[nil] == nil { counts[nil] = 0 }
            return counts.map { ([$0.key ?? ""], Double($0.value)) }
        }
    }

    /// Cluster mode's gauges: the shared queues' figures on the server, and the connection.
    func observe(cluster delivery: ClusterDelivery, client: RedisClient, watch: ServerWatch) {
        observe(delivery: delivery)
        // The same name as single-node mode's, so one alert and one panel serve both.
        registry.gauge("storerelay_oldest_pending_seconds",
                       help: "Age of the oldest event not yet delivered, by destination (0 when none; cluster mode: the oldest pending entry).",
                       labels: ["destination"]) {
            delivery.serverFigures.map { ([$0.destination], Double($0.figures.oldestPendingAge?.wholeMilliseconds ?? 0) / 1000) }
        }
        registry.gauge("storerelay_cluster_stream_length", help: "Cluster mode: entries in each destination's stream (read or not).",
                       labels: ["destination"]) {
            delivery.serverFigures.map { ([$0.destination], Double($0.figures.length)) }
        }
        registry.gauge("storerelay_cluster_pending", help: "Cluster mode: entries read by an instance and not yet finished, by destination.",
                       labels: ["destination"]) {
            delivery.serverFigures.map { ([$0.destination], Double($0.figures.pending)) }
        }
        registry.gauge("storerelay_cluster_oldest_pending_seconds",
                       help: "Cluster mode: age of the oldest pending entry, by destination (0 when none).", labels: ["destination"]) {
            delivery.serverFigures.map { ([$0.destination], Double($0.figures.oldestPendingAge?.wholeMilliseconds ?? 0) / 1000) }
        }
        registry.gauge("storerelay_cluster_delayed", help: "Cluster mode: retries waiting in the delayed set, by destination.",
                       labels: ["destination"]) {
            delivery.serverFigures.map { ([$0.destination], Double($0.figures.delayed)) }
        }
        registry.gauge("storerelay_cluster_connected", help: "Cluster mode: 1 while the server is connected and durable, else 0.") {
            [([], client.isConnected && watch.acceptanceRefusal == nil ? 1 : 0)]
        }
    }

    func notificationAnswered(app: String?, environment: String?, version: String?, outcome: String, seconds: Double) {
        received.increment([app ?? "unknown", environment ?? "unknown", version ?? "unknown", outcome])
        acknowledgement.observe(seconds, [outcome])
    }
}

extension GatewayMetrics: DeliveryObserver {
    func attemptFinished(destination: String, outcome: String, seconds: Double) {
        deliveries.increment([destination, outcome])
        deliverySeconds.observe(seconds, [destination])
    }

    func deadLettered(destination: String?, reason: DeadLetter.Reason) {
        deadLettersCreated.increment([destination ?? "", reason.rawValue])
    }

    func entriesClaimed(destination: String, count: Int) {
        clusterClaims.increment([destination], by: Double(count))
    }

    func entriesLost(destination: String, count: Int) {
        clusterLost.increment([destination], by: Double(count))
    }

    func recordTampered(record: String) {
        clusterTampered.increment([record])
    }

    func traced(_ span: TraceSpan) {
        spans?.record(span)
    }
}
