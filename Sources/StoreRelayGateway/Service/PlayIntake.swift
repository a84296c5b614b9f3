import Dispatch
import StoreRelayGooglePlay
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// The Google Play push endpoint (`path PATH play`): token and body checked off the
/// connection's queue, then the same store as Apple's notifications (journal or cluster
/// server), then the answer — 2xx only once the record is durable; a redelivered
/// `messageId` is a duplicate, still 2xx, stored once.
///
/// Google's keys come from a `GoogleKeySetSource` that refreshes itself in the background;
/// a push only reads the keys in force. Without a `play` path nothing is fetched.
final class PlayIntake: Sendable {
    private let processor: Locked<PlayProcessor>
    private let keySource = Locked<GoogleKeySetSource?>(nil)
    private let store: any NotificationStore
    private let clock: any TimeSource
    private let logger: Logger
    private let metrics: GatewayMetrics
    private let intakeWatch: IntakeSilenceWatch?
    /// Developer API enrichment for apps with a `service-account`.
    private let enrichers: PlayEnrichers
    /// RSA verification is CPU work: it runs here, never on a connection's serial queue.
    private let verificationQueue = DispatchQueue(
        label: "storerelay.play-verification", attributes: .concurrent, target: .nonBlockingWork)

    /// Throws when a `service-account` file or the enrichment inbox cannot be used (`PlayEnrichers`).
    init(configuration: GatewayConfiguration, store: any NotificationStore, inbox: any PlayEnrichmentInbox,
         clock: any TimeSource, logger: Logger, metrics: GatewayMetrics, intakeWatch: IntakeSilenceWatch?) throws(GatewayError) {
        let processor = Locked(PlayProcessor(configuration, dedupeWindow: store.dedupeWindow))
        self.processor = processor
        self.store = store
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.intakeWatch = intakeWatch
        // An enriched event is routed again by the processor in force when it is stored.
        enrichers = try PlayEnrichers(configuration: configuration, store: store, inbox: inbox, clock: clock, logger: logger, metrics: metrics,
                                  reroute: { stored, event in processor.current.rerouted(stored, with: event) })
        replaceKeySource(for: configuration)
        try enrichers.resume()
    }

    /// The key source's options for `configuration`; nil when no path takes Play pushes.
    static func keyOptions(_ configuration: GatewayConfiguration) -> GoogleKeySetSource.Options? {
        guard configuration.hasPlayPath else { return nil }
        if let override = configuration.googleCerts {
            return GoogleKeySetSource.Options(url: override.url, caFile: override.caFile)
        }
        // A constant that parses.
        guard let url = try? HTTPURL.parse(GatewayConfiguration.defaultGoogleCertsURL) else { return nil }
        return GoogleKeySetSource.Options(url: url)
    }

    /// Pushes acknowledged and waiting for the Developer API (`storerelay_play_enrichment_pending`).
    var enrichmentsPending: Int { enrichers.pendingCount }

    /// A reload's enrichments, made before anything is applied: throws when a
    /// `service-account` file cannot be used, and the reload is rejected.
    func prepareEnrichments(_ configuration: GatewayConfiguration) throws(GatewayError) -> [String: PlayEnrichment] {
        try enrichers.prepare(configuration)
    }

    /// Applies a reloaded configuration (with its `prepareEnrichments`) to pushes that arrive
    /// from now on; a changed `google-certs-url` (or a first `play` path) starts a new key source.
    func replace(configuration: GatewayConfiguration, enrichments: [String: PlayEnrichment]) {
        processor.withLock { $0 = PlayProcessor(configuration, dedupeWindow: store.dedupeWindow) }
        enrichers.replace(with: enrichments)
        replaceKeySource(for: configuration)
    }

    private func replaceKeySource(for configuration: GatewayConfiguration) {
        let options = Self.keyOptions(configuration)
        let (started, retired) = keySource.withLock { source -> (GoogleKeySetSource?, GoogleKeySetSource?) in
            if source?.options.url == options?.url, source?.options.caFile == options?.caFile { return (nil, nil) }
            let old = source
            source = options.map { GoogleKeySetSource(options: $0, logger: logger) }
            return (source, old)
        }
        retired?.stop()
        started?.start()
    }

    /// Stops refreshing Google's keys (shutdown).
    func stop() {
        keySource.current?.stop()
        enrichers.stop()
    }

    /// Handles one push posted on a `play` path.
    func receive(request: HTTPRequest, completion: @escaping @Sendable (IntakeOutcome) -> Void) {
        let started = MonotonicClock.nanoseconds()
        let authorizations = request.headers.values(for: "Authorization")
        let body = request.body
        let client = request.remoteAddress ?? ""
        // Two credentials are one too many: which one a proxy or we would read is a guess.
        guard authorizations.count <= 1 else {
            let refusal = PlayProcessor.Refusal.unauthorized("The push has \(authorizations.count) Authorization headers; expected one.")
            logger.notice("play push rejected", [("reason", refusal.rejection.message), ("client", client)])
            return answer(.rejected(refusal.rejection), stored: nil, started: started, completion: completion)
        }
        let authorization = authorizations.first
        let received = SpanClock.now()
        verificationQueue.async { [self] in
            var timing = IntakeSpans(received: received)
            timing.verifyStart = SpanClock.now()
            let source = keySource.current
            let stored: StoredNotification
            do throws(PlayProcessor.Refusal) {
                stored = try processor.current.process(authorization: authorization, body: body, keys: source?.current,
                                                       receivedAt: clock.now())
            } catch {
                if case .unknownKey(let kid) = error { source?.refresh(forUnknownKey: kid) }
                logger.notice("play push rejected", [("reason", error.rejection.message), ("client", client)])
                answer(.rejected(error.rejection), stored: nil, started: started, completion: completion)
                return
            }
            timing.verifyEnd = SpanClock.now()
            timing.journalStart = timing.verifyEnd
            keep(stored, client: client) { [self, timing] outcome in
                let answered = SpanClock.now()
                answer(outcome, stored: stored, started: started, completion: completion)
                // After the answer, as for Apple's: the trace's receive, verify and journal spans.
                if let exporter = metrics.spans,
                   let spans = timing.spans(for: outcome, event: stored.event, store: store is ClusterStore ? "cluster" : "journal",
                                            answered: answered) {
                    for span in spans { exporter.record(span) }
                }
            }
        }
    }

    private func answer(_ outcome: IntakeOutcome, stored: StoredNotification?, started: UInt64,
                        completion: @escaping @Sendable (IntakeOutcome) -> Void) {
        // A refused push was not read far enough to name its app or environment.
        let event = stored?.event
        let environment = event?.environment?.rawValue
        metrics.intake.count(app: event?.bundleId, environment: environment, outcome: outcome.label, at: clock.now())
        if case .accepted = outcome, let event {
            intakeWatch?.received(app: event.bundleId ?? "unknown", environment: environment ?? "unknown")
        }
        metrics.notificationAnswered(app: event?.bundleId, environment: environment, version: "play", outcome: outcome.label,
                                     seconds: Double(MonotonicClock.nanoseconds() - started) / 1e9)
        completion(outcome)
    }

    private func keep(_ stored: StoredNotification, client: String, completion: @escaping @Sendable (IntakeOutcome) -> Void) {
        if enrichers.wantsEnrichment(stored) { return keepForEnrichment(stored, client: client, completion: completion) }
        let id = stored.id
        let event = stored.event
        let reason = store.unavailableReason
        store.store(stored) { [logger] outcome in
            let common: Logger.Metadata = [
                ("event.id", id), ("event.type", event.type), ("source", PlayEvent.source),
                ("bundle.id", event.bundleId ?? ""), ("purchase.token", String((event.originalTransactionId ?? "").prefix(24))),
                ("client", client),
            ]
            switch outcome {
            case .stored:
                if case .quarantine(let why) = stored.disposition {
                    logger.warning("notification quarantined", common + [("reason", why)])
                    completion(.quarantined(id: id))
                } else {
                    logger.info("notification accepted", common)
                    completion(.accepted(id: id))
                }
            case .duplicate:
                logger.info("duplicate notification", [("event.id", id), ("source", PlayEvent.source), ("client", client)])
                completion(.duplicate(id: id))
            case .failed(let error):
                logger.error("notification not stored", common + [("error", error)])
                completion(.rejected(.unavailable("The push could not be stored; retry later (\(reason)).")))
            }
        }
    }

    /// A push to enrich: a redelivery (already stored, or still in the inbox) is a duplicate;
    /// anything else is answered once the inbox holds it durably, and stored after the
    /// Developer API answered (`PlayEnrichers`).
    private func keepForEnrichment(_ stored: StoredNotification, client: String,
                                   completion: @escaping @Sendable (IntakeOutcome) -> Void) {
        let id = stored.id
        let common: Logger.Metadata = [
            ("event.id", id), ("event.type", stored.event.type), ("source", PlayEvent.source),
            ("bundle.id", stored.event.bundleId ?? ""), ("client", client),
        ]
        if enrichers.isPending(id) {
            logger.info("duplicate notification", common)
            return completion(.duplicate(id: id))
        }
        store.contains(id: id) { [self] known in
            if known == true {
                logger.info("duplicate notification", common)
                return completion(.duplicate(id: id))
            }
            enrichers.accept(stored) { [self] error in
                if let error {
                    logger.error("notification not stored", common + [("error", error)])
                    return completion(.rejected(.unavailable("The push could not be stored; retry later (\(error)).")))
                }
                logger.info("notification accepted; enriching", common)
                completion(.accepted(id: id))
            }
        }
    }
}
