import StoreRelayGooglePlay
import StoreRelayVerification
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayCore

/// Verifies, normalizes, judges and routes one Google Play push; no I/O. Shared by the
/// public listener and `storerelay verify`, as `NotificationProcessor` is for Apple's.
///
/// Order: the token first (nothing unauthenticated is stored: 401, or 503 while the key is
/// unknown), then the body. An authenticated body that is no push, whose data is no
/// DeveloperNotification, or whose package is not declared (or was pushed by another
/// package's subscription) is quarantined: stored, answered 200 so Pub/Sub stops
/// redelivering it, fanned out nowhere (SPEC "Public listener").
struct PlayProcessor: Sendable {
    /// Why a push was refused before anything was stored.
    enum Refusal: Error, Equatable {
        /// 401: no token, or one that is not Google's for one of our push subscriptions.
        case unauthorized(String)
        /// 503: the token names a key the current set lacks; one refresh is due.
        case unknownKey(String)
        /// 503: no key set yet.
        case noKeys

        var rejection: IntakeRejection {
            switch self {
            case .unauthorized(let message): .signature(message)
            case .unknownKey(let kid):
                .unavailable("The push token's key '\(kid.prefix(80))' is not in Google's key set as last fetched; it is being fetched again, retry later.")
            case .noKeys: .unavailable("Google's push-token keys have not been fetched yet; retry later.")
            }
        }
    }

    let verifier: PushTokenVerifier
    /// Declared `play` blocks by package name.
    let apps: [String: PlayAppConfiguration]
    let routes: RouteTable
    /// How long the store remembers ids: an older event is quarantined as stale.
    let dedupeWindow: Duration

    init(_ configuration: GatewayConfiguration, dedupeWindow: Duration? = nil) {
        var apps: [String: PlayAppConfiguration] = [:]
        for app in configuration.playApps { apps[app.packageName] = app }
        self.apps = apps
        verifier = PushTokenVerifier(subscribers: Set(configuration.playApps.map {
            PushTokenVerifier.Subscriber(audience: $0.pushAudience, account: $0.pushAccount)
        }))
        routes = configuration.routes
        self.dedupeWindow = dedupeWindow ?? configuration.dedupeWindow
    }

    func process(authorization: String?, body: [UInt8], keys: JSONWebKeySet?, receivedAt: Timestamp) throws(Refusal) -> StoredNotification {
        let claims: PushTokenClaims
        switch verifier.verify(authorization: authorization, keys: keys, now: receivedAt) {
        case .valid(let valid): claims = valid
        case .unknownKey(let kid): throw .unknownKey(kid)
        case .noKeys: throw .noKeys
        case .invalid(let reason): throw .unauthorized(reason)
        }
        return judge(body: body, claims: claims, receivedAt: receivedAt)
    }

    /// The stored notification of an authenticated push.
    func judge(body: [UInt8], claims: PushTokenClaims, receivedAt: Timestamp) -> StoredNotification {
        let push: PubSubPush
        do {
            push = try PubSubPush.parse(body)
        } catch {
            return quarantined(PlayEvent.unreadable(body: body, push: nil, packageName: nil, reason: error.reason, receivedAt: receivedAt),
                               body: body, reason: "not a Pub/Sub push: \(error.reason)", receivedAt: receivedAt)
        }
        let notification: DeveloperNotification
        do {
            notification = try DeveloperNotification.parse(push.data)
        } catch {
            return quarantined(PlayEvent.unreadable(body: body, push: push, packageName: nil, reason: error.reason, receivedAt: receivedAt),
                               body: body, reason: "not a DeveloperNotification: \(error.reason)", receivedAt: receivedAt)
        }
        let event = PlayEvent.normalize(push: push, notification: notification, receivedAt: receivedAt)
        if let reason = quarantineReason(notification, event: event, claims: claims, now: receivedAt) {
            return quarantined(event, body: body, reason: reason, receivedAt: receivedAt)
        }
        let destinations = routes.destinations(environment: event.environment ?? .production, bundleId: notification.packageName,
                                               type: event.type, subtype: nil)
        return StoredNotification(event: event, disposition: .accept, destinations: destinations, body: body, receivedAt: receivedAt)
    }

    /// `stored` with `event` in its place: the other half of the enrichment seam. The event
    /// `PlayEvent.enriched(_:with:)` returns may have turned `sandbox`, so an accepted push's
    /// destinations are decided again from this route table; a quarantined one stays routed
    /// nowhere. The id must not change: it is the journal's and the downstreams' dedupe key.
    func rerouted(_ stored: StoredNotification, with event: NormalizedEvent) -> StoredNotification {
        precondition(event.id == stored.id, "an enriched event keeps its id")
        var rerouted = stored
        rerouted.event = event
        if stored.disposition == .accept {
            rerouted.destinations = routes.destinations(environment: event.environment ?? .production, bundleId: event.bundleId ?? "",
                                                        type: event.type, subtype: event.subtype)
        }
        return rerouted
    }

    private func quarantineReason(_ notification: DeveloperNotification, event: NormalizedEvent, claims: PushTokenClaims,
                                  now: Timestamp) -> String? {
        guard let app = apps[notification.packageName] else {
            return "Google Play package \(notification.packageName.prefix(120)) is not declared (no play block names it)"
        }
        guard app.pushAudience == claims.audience, app.pushAccount == claims.email else {
            return "a push for \(app.packageName) came through the push subscription of audience \(claims.audience.prefix(120)), "
                + "not its own (\(app.pushAudience))"
        }
        if let stale = StalenessRule(window: dedupeWindow).staleness(signed: notification.eventTime, now: now) {
            return stale
        }
        return WebhookRequest.unsendableField(of: event)
    }

    private func quarantined(_ event: NormalizedEvent, body: [UInt8], reason: String, receivedAt: Timestamp) -> StoredNotification {
        StoredNotification(event: event, disposition: .quarantine(reason: reason), destinations: [], body: body, receivedAt: receivedAt)
    }
}
