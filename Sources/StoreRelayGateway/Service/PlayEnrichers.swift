import Dispatch
import StoreRelayGooglePlay
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayVerification
import StoreRelayNet
import StoreRelayCore

/// Enrichment of Google Play events with the Developer API, for apps whose `play` block has a
/// `service-account` (SPEC "Google Play ... Enrichment").
///
/// A push to enrich is written durably to the inbox (`PlayEnrichmentInbox`) and answered
/// 2xx at once; the API is asked in the background (`PlayEnrichment`: retries with backoff,
/// never holding the answer); then the event — with `subscription` from the answer and
/// `environment` `sandbox` for a test purchase, routed again for that environment, or as
/// accepted when the API could not say — goes through the store (journal or cluster server,
/// deduplicated by id) to fan-out, and leaves the inbox. What the inbox hands back (the
/// gateway, or in cluster mode another instance, stopped or crashed meanwhile) is enriched
/// again, from its original time.
final class PlayEnrichers: Sendable {
    private let enrichers: Locked<[String: PlayEnrichment]>
    /// Enrichments a reload replaced while some of theirs were under way: they finish with
    /// the one they started with, and `stop()` ends their waits too.
    private let retired = Locked<[PlayEnrichment]>([])
    /// The stored notification with its enriched event, routed again (`PlayProcessor.rerouted`).
    private let reroute: @Sendable (StoredNotification, NormalizedEvent) -> StoredNotification
    private let inbox: any PlayEnrichmentInbox
    private let store: any NotificationStore
    private let http: HTTPClient
    private let clock: any TimeSource
    private let logger: Logger
    private let metrics: GatewayMetrics?
    private let retries: PlayEnrichment.Retries
    private let stopped = Locked(false)
    /// Where a store that failed (the journal could not write) is tried again.
    private let retryQueue = DispatchQueue(label: "storerelay.play-enrichment.store-retries")

    /// Throws when a `service-account` file cannot be used: the start is refused.
    init(configuration: GatewayConfiguration, store: any NotificationStore, inbox: any PlayEnrichmentInbox,
         clock: any TimeSource, logger: Logger, metrics: GatewayMetrics? = nil, retries: PlayEnrichment.Retries = PlayEnrichment.Retries(),
         reroute: @escaping @Sendable (StoredNotification, NormalizedEvent) -> StoredNotification) throws(GatewayError) {
        let http = HTTPClient()
        let made: [String: PlayEnrichment]
        do throws(GatewayError) {
            made = try Self.enrichments(configuration, http: http, clock: clock, retries: retries)
        } catch {
            http.shutdown()
            throw error
        }
        self.http = http
        self.inbox = inbox
        self.store = store
        self.clock = clock
        self.logger = logger
        self.metrics = metrics
        self.retries = retries
        self.reroute = reroute
        enrichers = Locked(made)
    }

    /// Enriches what the inbox kept from before, and in cluster mode what other instances
    /// left (call once, after init). Throws when the inbox cannot be read: the start is refused.
    func resume() throws(GatewayError) {
        try inbox.start { [self] unfinished in
            for pending in unfinished {
                logger.info("play enrichment resumed", [("event.id", pending.id)])
                enrichThenStore(pending)
            }
        }
    }

    /// Whether `notification` waits for the Developer API before fan-out.
    func wantsEnrichment(_ notification: StoredNotification) -> Bool {
        guard case .accept = notification.disposition, let package = notification.event.bundleId,
              enrichers.current[package] != nil else { return false }
        return Self.request(for: notification) != nil
    }

    /// Whether `id` is in the inbox (a Pub/Sub redelivery of a push not yet stored).
    func isPending(_ id: String) -> Bool { inbox.contains(id) }

    /// Pushes acknowledged and waiting for the Developer API (or for their store).
    var pendingCount: Int { inbox.count }

    /// Writes `notification` to the inbox; `completion(nil)` once that is durable (answer 2xx
    /// then), or with why not. The enrichment and the store follow in the background. A push
    /// the store could not take once enriched is refused now, before anything is promised.
    func accept(_ notification: StoredNotification, completion: @escaping @Sendable (String?) -> Void) {
        let encoded = notification.encoded()
        guard encoded.count + Self.enrichmentAllowance <= store.maxRecordBytes else {
            return completion("the push is too large to store (\(encoded.count) bytes, at most "
                              + "\(store.maxRecordBytes - Self.enrichmentAllowance) with room for the Developer API's answer)")
        }
        inbox.write(notification, encoded: encoded) { [self] error in
            completion(error)
            // Off the inbox's writer: asking Google starts with signing an assertion, and the
            // next batch of puts must not wait for that.
            if error == nil { DispatchQueue.nonBlockingWork.async { self.enrichThenStore(notification) } }
        }
    }

    /// The enrichments `configuration` asks for, one per app with a `service-account`;
    /// throws, and changes nothing, when a file cannot be used, so a reload naming one is
    /// rejected. `replace(with:)` applies them once the rest of the reload has succeeded.
    func prepare(_ configuration: GatewayConfiguration) throws(GatewayError) -> [String: PlayEnrichment] {
        try Self.enrichments(configuration, http: http, clock: clock, retries: retries)
    }

    func replace(with made: [String: PlayEnrichment]) {
        let previous = enrichers.current
        enrichers.withLock { $0 = made }
        let kept = Set(made.values.map(ObjectIdentifier.init))
        retired.withLock { retired in
            retired = (retired + previous.values.filter { !kept.contains(ObjectIdentifier($0)) }).filter { $0.inProgress > 0 }
        }
    }

    /// Ends the waits for retries; what is unfinished stays in the inbox for the next start.
    func stop() {
        stopped.withLock { $0 = true }
        inbox.stop()
        for enrichment in Array(enrichers.current.values) + retired.current { enrichment.cancel() }
        http.shutdown()
    }

    // MARK: The pipeline

    private func enrichThenStore(_ notification: StoredNotification) {
        guard let package = notification.event.bundleId, let enrichment = enrichers.current[package],
              let request = Self.request(for: notification)
        else { return store(notification) }
        enrichment.enrich(request, acceptedAt: notification.receivedAt) { [self] outcome in
            var metadata: Logger.Metadata = [
                ("event.id", notification.id), ("bundle.id", package), ("outcome", outcome.label), ("attempts", outcome.attempts),
            ]
            if !(outcome.reason == "cancelled" || (outcome.purchase == nil && stopped.current)) {
                metrics?.playEnriched(app: package, outcome: outcome.label)
            }
            switch outcome {
            case .enriched(let purchase, _):
                guard let answer = purchase.resource.objectValue else { return store(notification) }
                let event = PlayEvent.enriched(notification.event, with: answer)
                let enriched = reroute(notification, event)
                // `accept` left room for an answer; one larger than that would never store.
                guard enriched.encoded().count <= store.maxRecordBytes else {
                    logger.warning("play enrichment answer too large to store; the event goes out without it", metadata)
                    return store(notification)
                }
                logger.info("play enrichment", metadata + [("environment", event.environment?.rawValue ?? "")])
                store(enriched)
            case .failed(let error, _):
                metadata.append(("reason", error.reason))
                metadata.append(("error", error.message))
                // Stopping (the wait or the exchange cut short): the inbox keeps it, and the
                // next start asks again.
                if error.kind == .cancelled || stopped.current { return logger.info("play enrichment interrupted", metadata) }
                logger.warning("play enrichment failed; the event goes out without it", metadata)
                store(notification)
            }
        }
    }

    /// Stores (journal or cluster server, then fan-out) and takes it out of the inbox; a
    /// failed store is tried again every few seconds until it succeeds or the gateway stops.
    private func store(_ notification: StoredNotification) {
        store.store(notification) { [self] outcome in
            switch outcome {
            case .stored, .duplicate:
                inbox.remove(notification.id)
            case .failed(let why):
                guard !stopped.current else { return }
                logger.error("enriched play event not stored; trying again", [("event.id", notification.id), ("error", why)])
                retryQueue.asyncAfter(deadline: .now() + .seconds(5)) { [self] in
                    guard !stopped.current else { return }
                    store(notification)
                }
            }
        }
    }

    /// Room left in a stored record for the Developer API's answer (a purchase resource is a
    /// few kilobytes).
    static let enrichmentAllowance = 256 * 1024

    /// The purchase an event is about: a subscription's (or a voided subscription's) token,
    /// or a one-time product's sku and token. Nil: nothing to ask (TEST, a voided one-time
    /// product, which `purchases.products.get` cannot find without its product id).
    static func request(for notification: StoredNotification) -> PlayEnrichmentRequest? {
        let event = notification.event.json
        guard let package = notification.event.bundleId, let transaction = event["transaction"]?.objectValue,
              let token = transaction["purchaseToken"]?.stringValue, !token.isEmpty
        else { return nil }
        if let sku = transaction["sku"]?.stringValue {
            return PlayEnrichmentRequest(packageName: package, kind: .product, productId: sku, purchaseToken: token)
        }
        if transaction["subscriptionId"] != nil || transaction["productType"]?.int64Value == 1 {
            return PlayEnrichmentRequest(packageName: package, kind: .subscription, purchaseToken: token)
        }
        return nil
    }

    /// One `PlayEnrichment` per app with a `service-account`, made again on every reload
    /// (enrichments under way finish with the one they started with). A file that cannot be
    /// used is an error, as a bad Apple `api-key` is: running on without enrichment would send
    /// a test purchase's event to the production routes, since only the Developer API says it
    /// is one.
    private static func enrichments(
        _ configuration: GatewayConfiguration, http: HTTPClient, clock: any TimeSource, retries: PlayEnrichment.Retries
    ) throws(GatewayError) -> [String: PlayEnrichment] {
        var result: [String: PlayEnrichment] = [:]
        for app in configuration.playApps {
            guard let file = app.serviceAccountFile else { continue }
            do throws(PlayAPIError) {
                let account = try ServiceAccount.load(file)
                let api = try PlayDeveloperAPI(account: account, baseURL: configuration.googleAPI?.url,
                                               caFile: configuration.googleAPI?.caFile, http: http, clock: clock)
                result[app.packageName] = PlayEnrichment(api: api, retries: retries, clock: clock)
            } catch {
                throw GatewayError("play \(app.packageName): \(error.message)")
            }
        }
        return result
    }
}
