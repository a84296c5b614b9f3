import Dispatch
public import StoreRelayCore

/// Enriches Google Play events with what the Developer API says of their purchase, in the
/// background: the gateway calls `enrich` after the durable write (the push is acknowledged
/// already) and fans the event out when the outcome arrives — with `subscription` set to
/// the API's answer and `environment` `sandbox` for a test purchase, or as it was when the
/// API could not say.
///
/// Retryable failures (no answer, 429, 5xx) are asked again after an exponential backoff
/// with jitter, a timer on a queue of its own (no thread sleeps), until `Retries.attempts`
/// or `Retries.maximumAge` since the notification was accepted run out. A 429's
/// `Retry-After` is honoured when longer than the backoff. Anything else (401 with a fresh
/// token, 403, 404, a malformed answer) is returned at once: asking again would not help.
public final class PlayEnrichment: Sendable {
    public struct Retries: Sendable {
        /// Attempts of one enrichment before its last error is returned: the first and five retries.
        public var attempts = 6
        public var firstBackoff: Duration = .seconds(1)
        public var maximumBackoff: Duration = .seconds(60)
        /// No retry starts later than this after the notification was accepted: its
        /// delivery waits for the outcome, and should not wait longer.
        public var maximumAge: Duration = .seconds(10 * 60)
        public init() {}
    }

    private let api: PlayDeveloperAPI
    private let retries: Retries
    private let clock: any TimeSource
    private let waits = RetryWaits(label: "storerelay.googleplay.enrichment-retries")
    private let started = Locked(0)

    public init(api: PlayDeveloperAPI, retries: Retries = Retries(), clock: any TimeSource = WallClock()) {
        self.api = api
        self.retries = retries
        self.clock = clock
    }

    /// Enrichments started and not yet called back (for the gauge and for shutdown).
    public var inProgress: Int { started.current }

    /// Asks the API about `request`'s purchase, retrying as above; `completion` is called
    /// exactly once, on the HTTP client's or the timer's queue (at once, on the caller's
    /// thread, when there is nothing to ask or `cancel()` came first). `acceptedAt` is when the
    /// notification was accepted (its age bounds the retries; a recovered one keeps its
    /// original time), now when nil.
    public func enrich(
        _ request: PlayEnrichmentRequest, acceptedAt: Timestamp? = nil,
        completion: @escaping @Sendable (PlayEnrichmentOutcome) -> Void
    ) {
        let started = acceptedAt ?? clock.now()
        self.started.withLock { $0 += 1 }
        let finish: @Sendable (PlayEnrichmentOutcome) -> Void = { [counter = self.started] outcome in
            counter.withLock { $0 -= 1 }
            completion(outcome)
        }
        attempt(request, number: 1, started: started, completion: finish)
    }

    /// Ends every wait for a retry at once (the gateway stops): each of those enrichments is
    /// called back `.failed` with `.cancelled`, and later ones fail the same way at once.
    public func cancel() { waits.cancel() }

    private func attempt(
        _ request: PlayEnrichmentRequest, number: Int, started: Timestamp, completion: @escaping @Sendable (PlayEnrichmentOutcome) -> Void
    ) {
        if waits.isCancelled {
            return completion(.failed(PlayAPIError(.cancelled, "stopped before asking Google"), attempts: number - 1))
        }
        call(request) { [self] result in
            switch result {
            case .success(let purchase):
                completion(.enriched(purchase, attempts: number))
            case .failure(let error):
                guard error.isRetryable, number < retries.attempts else { return completion(.failed(error, attempts: number)) }
                var generator = SystemRandomNumberGenerator()
                var wait = backoff(afterFailures: number, random: &generator)
                if let retryAfter = error.retryAfter, retryAfter > wait { wait = min(retryAfter, retries.maximumBackoff) }
                let deadline = started.milliseconds + retries.maximumAge.wholeMilliseconds
                guard clock.now().milliseconds + wait.wholeMilliseconds <= deadline else {
                    return completion(.failed(error, attempts: number))
                }
                waits.pause(wait) { [self] resumed in
                    guard resumed else {
                        return completion(.failed(PlayAPIError(.cancelled, "stopped while waiting to ask Google again"), attempts: number))
                    }
                    attempt(request, number: number + 1, started: started, completion: completion)
                }
            }
        }
    }

    private func call(_ request: PlayEnrichmentRequest, completion: @escaping @Sendable (Result<PlayPurchase, PlayAPIError>) -> Void) {
        switch request.kind {
        case .subscription:
            api.subscription(packageName: request.packageName, purchaseToken: request.purchaseToken, completion: completion)
        case .product:
            guard let productId = request.productId, !productId.isEmpty else {
                return completion(.failure(PlayAPIError(.rejected, "purchases.products.get needs the product id, and the notification has none")))
            }
            api.product(packageName: request.packageName, productId: productId, purchaseToken: request.purchaseToken, completion: completion)
        }
    }

    /// The wait before attempt `failures + 1` (`RetryWaits.backoff` between the `retries` bounds).
    func backoff(afterFailures failures: Int, random: inout some RandomNumberGenerator) -> Duration {
        RetryWaits.backoff(afterFailures: failures, first: retries.firstBackoff, maximum: retries.maximumBackoff, random: &random)
    }
}

/// The purchase a Google Play notification is about.
public struct PlayEnrichmentRequest: Sendable, Hashable {
    public enum Kind: String, Sendable {
        /// `subscriptionNotification`, or a voided subscription: `purchases.subscriptionsv2.get`.
        case subscription
        /// `oneTimeProductNotification`: `purchases.products.get`, which needs the product id (`sku`).
        case product
    }

    public var packageName: String
    public var kind: Kind
    /// The one-time product's id (`sku`); the subscription's id is not needed by subscriptionsv2.
    public var productId: String?
    public var purchaseToken: String

    public init(packageName: String, kind: Kind, productId: String? = nil, purchaseToken: String) {
        self.packageName = packageName
        self.kind = kind
        self.productId = productId
        self.purchaseToken = purchaseToken
    }
}

/// How one enrichment ended, for the event, the metrics and the log.
public enum PlayEnrichmentOutcome: Sendable {
    case enriched(PlayPurchase, attempts: Int)
    case failed(PlayAPIError, attempts: Int)

    /// `ok`, `test_purchase` or `failed`: the metric's outcome label.
    public var label: String {
        switch self {
        case .enriched(let purchase, _): return purchase.isTestPurchase ? "test_purchase" : "ok"
        case .failed: return "failed"
        }
    }

    /// Why it failed, as `PlayAPIError.reason` (nil when enriched).
    public var reason: String? {
        if case .failed(let error, _) = self { return error.reason }
        return nil
    }

    public var purchase: PlayPurchase? {
        if case .enriched(let purchase, _) = self { return purchase }
        return nil
    }

    public var attempts: Int {
        switch self {
        case .enriched(_, let attempts), .failed(_, let attempts): return attempts
        }
    }
}
