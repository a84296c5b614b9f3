import FuzzSupport
import StoreRelayVerification
import StoreRelayCore

/// What the gateway does with a body (NotificationProcessor, which is not a library product,
/// so its steps are repeated here), plus the invariants each step promises.
enum NotificationBodyCheck {
    /// A fixed time, so that a saved input replays identically whatever the date.
    struct FixedClock: TimeSource {
        func now() -> Timestamp { Timestamp(milliseconds: 1_767_225_600_000) }  // 2026-01-01
    }
    static let receivedAt = Timestamp(milliseconds: 1_767_225_600_123)

    /// The production verifier: Apple Root CA - G3 only, every environment verified.
    static let strict: NotificationVerifier = {
        do { return try NotificationVerifier(configuration: VerifierConfiguration(clock: FixedClock())) }
        catch { fatalError("cannot create the verifier: \(error)") }
    }()
    /// A verifier told to skip checks for every environment: only Xcode and LocalTesting may
    /// actually be skipped, and this lets fuzzed payloads reach normalization.
    static let lenient: NotificationVerifier = {
        let configuration = VerifierConfiguration(
            clock: FixedClock(), unverifiedEnvironments: Set(AppStoreEnvironment.allCases))
        do { return try NotificationVerifier(configuration: configuration) }
        catch { fatalError("cannot create the verifier: \(error)") }
    }()

    static func checkCompactJWS(_ text: String) {
        guard let decoded = try? DecodedJWS(compact: text) else { return }
        _ = try? decoded.effectiveDate(.signedDate)
        _ = try? decoded.effectiveDate(.receiptCreationDate)
        _ = decoded.payloadEnvironment
        verifyV2(signedPayload: text)
    }

    /// The gateway's classification: `signedPayload` makes it V2, else `notification_type` V1.
    static func checkBody(_ body: [UInt8]) {
        if let event = try? NormalizedEvent(storedJSON: body) {
            expectJSON(event.jsonBytes(), "a stored event re-serialized")
        }
        guard case .object(let object)? = try? JSONValue.parse(body) else { return }
        if let signed = object["signedPayload"] {
            if let text = signed.stringValue, !text.isEmpty { verifyV2(signedPayload: text, body: body) }
        } else if object["notification_type"]?.stringValue != nil {
            checkV1(body)
        }
    }

    private static func verifyV2(signedPayload: String, body: [UInt8]? = nil) {
        for verifier in [strict, lenient] {
            guard let reading = try? verifier.read(signedPayload: signedPayload) else { continue }
            let verified: VerifiedNotification
            switch reading {
            case .readable(let readable):
                verified = readable
            case .unreadable(let unreadable):
                // Kept (quarantined) only when proven Apple's: a skipped signature proves nothing.
                fuzzCheck(unreadable.signatureVerified, "a notification whose signature was skipped was kept as unreadable")
                let content = NotificationContent(payload: unreadable.payload, environment: unreadable.environment)
                if let event = try? NormalizedEvent(content: content, receivedAt: receivedAt) {
                    checkEvent(event, body: body ?? Array(signedPayload.utf8))
                }
                continue
            }
            if !verified.signatureVerified {
                fuzzCheck(verifier === lenient && [.xcode, .localtesting].contains(verified.environment),
                          "a \(verified.environment) notification was accepted without its signature being checked")
            }
            for nested in [verified.transaction, verified.renewal, verified.appTransaction].compactMap({ $0 }) {
                fuzzCheck(nested.signatureVerified == verified.signatureVerified,
                          "nested signed data verified differently from its notification")
            }
            guard let payload = verified.payload.objectValue else { continue }
            let content = NotificationContent(
                payload: payload,
                transaction: verified.transaction.map { .object($0.payload) },
                renewal: verified.renewal.map { .object($0.payload) },
                appTransaction: verified.appTransaction.map { .object($0.payload) },
                environment: verified.environment)
            guard let event = try? NormalizedEvent(content: content, receivedAt: receivedAt) else { continue }
            checkEvent(event, body: body ?? Array(signedPayload.utf8))
        }
    }

    private static func checkV1(_ body: [UInt8]) {
        guard let notification = try? V1Notification.parse(body) else { return }
        _ = V1SharedSecret.matches(password: notification.password ?? "", secrets: ["secret", ""])
        let event = notification.normalized(receivedAt: receivedAt)
        fuzzCheck(event.legacyType == notification.notificationType, "V1 type not kept in legacyType")
        checkEvent(event, body: body)
    }

    /// Every event serializes to JSON with all the SPEC's keys, in order, and its `raw`
    /// never carries a `password` member, at any depth.
    private static func checkEvent(_ event: NormalizedEvent, body: [UInt8]) {
        let plain = expectJSON(event.jsonBytes(), "an event")
        fuzzCheck(plain?.objectValue?.keys == NormalizedEvent.keys, "event keys are not the SPEC's")
        // The journal and the dead-letter store read events back this way after a restart.
        do {
            let stored = try NormalizedEvent(storedJSON: event.jsonBytes())
            fuzzCheck(stored == event, "an event read back from its JSON differs from the event")
        } catch {
            fuzzCheck(false, "an event cannot be read back from its own JSON: \(error)")
        }
        let withRaw = expectJSON(event.jsonBytes(includingRaw: body), "an event with raw")
        guard let raw = withRaw?["raw"]?.stringValue else {
            fuzzCheck(false, "raw is not a string")
            return
        }
        if let rawValue = try? JSONValue.parse(raw) {
            fuzzCheck(!containsPassword(rawValue), "raw carries a password member: \(raw.prefix(300))")
        }
    }

    private static func containsPassword(_ value: JSONValue) -> Bool {
        switch value {
        case .object(let object): object.members.contains { $0.key == "password" || containsPassword($0.value) }
        case .array(let elements): elements.contains(where: containsPassword)
        default: false
        }
    }

    @discardableResult
    private static func expectJSON(_ bytes: [UInt8], _ what: String) -> JSONValue? {
        do {
            return try JSONValue.parse(bytes)
        } catch {
            fuzzCheck(false, "\(what) is not valid JSON (\(error)): \(String(decoding: bytes.prefix(300), as: UTF8.self))")
            return nil
        }
    }
}
