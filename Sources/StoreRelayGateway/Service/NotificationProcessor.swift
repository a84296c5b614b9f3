import StoreRelayVerification
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayCore

/// Verifies, normalizes, judges and routes one notification body; no I/O.
///
/// Shared by the public listener and `storerelay verify`, so the offline answer is exactly
/// the one the gateway would give.
struct NotificationProcessor: Sendable {
    let verifier: NotificationVerifier
    let policy: AcceptancePolicy
    let routes: RouteTable

    /// `recoveredBy` marks a notification fetched from Apple rather than pushed by it
    /// (`"history"`): the event says so, so a downstream can tell a late arrival.
    func process(
        body: [UInt8], pathEnvironment: AppStoreEnvironment?, receivedAt: Timestamp, recoveredBy: String? = nil
    ) throws(IntakeRejection) -> StoredNotification {
        let event: NormalizedEvent
        var facts: AcceptancePolicy.Facts
        let classified = try NotificationBody.classify(body)
        switch classified {
        case .v2(let signedPayload):
            (event, facts) = try processV2(signedPayload: signedPayload, receivedAt: receivedAt, recoveredBy: recoveredBy)
        case .v1:
            (event, facts) = try processV1(body: body, receivedAt: receivedAt)
        }
        // An id or type no HTTP header can carry would fail every delivery the same way: it is
        // kept, quarantined, rather than routed to destinations that can never be sent it.
        if facts.notUnderstood == nil, let unsendable = WebhookRequest.unsendableField(of: event) {
            facts.notUnderstood = unsendable
        }
        let disposition = policy.disposition(of: facts, pathEnvironment: pathEnvironment, now: receivedAt)
        // Routes are decided once, now, and stored with the event: a restart or a reload
        // never changes where an acknowledged event goes.
        let destinations = if disposition == .accept, let environment = event.environment {
            routes.destinations(environment: environment, bundleId: event.bundleId ?? "", type: event.type, subtype: event.subtype)
        } else {
            [String]()
        }
        return StoredNotification(event: event, disposition: disposition, destinations: destinations,
                                  body: NotificationBody.forwardable(classified, received: body), receivedAt: receivedAt)
    }

    private func processV2(
        signedPayload: String, receivedAt: Timestamp, recoveredBy: String?
    ) throws(IntakeRejection) -> (NormalizedEvent, AcceptancePolicy.Facts) {
        let reading: NotificationReading
        do {
            reading = try verifier.read(signedPayload: signedPayload)
        } catch {
            throw error.code == .malformed ? .malformed(error.message) : .signature(error.message)
        }
        let verified: VerifiedNotification
        switch reading {
        case .readable(let notification): verified = notification
        case .unreadable(let notification): return try notUnderstood(notification, receivedAt: receivedAt, recoveredBy: recoveredBy)
        }
        guard let payload = verified.payload.objectValue else {
            throw .malformed("The signed payload is not a JSON object.")
        }
        var content = NotificationContent(
            payload: payload,
            transaction: verified.transaction.map { .object($0.payload) },
            renewal: verified.renewal.map { .object($0.payload) },
            appTransaction: verified.appTransaction.map { .object($0.payload) },
            environment: verified.environment
        )
        content.verified = verified.signatureVerified
        content.recoveredBy = recoveredBy
        let event = try normalize(content, receivedAt: receivedAt)
        let facts = AcceptancePolicy.Facts(
            environment: verified.environment, bundleId: verified.bundleId, appAppleId: verified.appAppleId,
            appleIdCheckable: verified.notificationType != "TEST" || verified.appAppleId != nil,
            signedDate: verified.signedDate)
        return (event, facts)
    }

    /// A notification Apple signed that this build cannot read: its event holds what the
    /// verified outer payload says (the rest stays in the stored body), and the policy
    /// quarantines it with the reason, so it is kept and Apple gets its 200.
    private func notUnderstood(
        _ notification: UnreadableNotification, receivedAt: Timestamp, recoveredBy: String?
    ) throws(IntakeRejection) -> (NormalizedEvent, AcceptancePolicy.Facts) {
        var content = NotificationContent(payload: notification.payload, environment: notification.environment)
        content.verified = notification.signatureVerified
        content.recoveredBy = recoveredBy
        let event = try normalize(content, receivedAt: receivedAt)
        let facts = AcceptancePolicy.Facts(
            environment: notification.environment, bundleId: event.bundleId, appAppleId: nil,
            signedDate: notification.signedDate, notUnderstood: notification.error.message)
        return (event, facts)
    }

    private func normalize(_ content: NotificationContent, receivedAt: Timestamp) throws(IntakeRejection) -> NormalizedEvent {
        do {
            return try NormalizedEvent(content: content, receivedAt: receivedAt)
        } catch {
            throw .malformed("The notification cannot be normalized: \(error.reason)")
        }
    }

    private func processV1(
        body: [UInt8], receivedAt: Timestamp
    ) throws(IntakeRejection) -> (NormalizedEvent, AcceptancePolicy.Facts) {
        let notification: V1Notification
        do {
            notification = try V1Notification.parse(body)
        } catch {
            throw .malformed("The V1 notification is invalid: \(error.reason)")
        }
        let secrets = policy.sharedSecrets(forBundle: notification.bundleId)
        guard !secrets.isEmpty else {
            throw .signature("No shared secret is configured for V1 notifications of \(notification.bundleId ?? "this app").")
        }
        guard V1SharedSecret.matches(password: notification.password ?? "", secrets: secrets) else {
            throw .signature("The V1 notification's password does not match the shared secret.")
        }
        let facts = AcceptancePolicy.Facts(
            environment: notification.environment, bundleId: notification.bundleId, appAppleId: nil)
        return (notification.normalized(receivedAt: receivedAt), facts)
    }
}
