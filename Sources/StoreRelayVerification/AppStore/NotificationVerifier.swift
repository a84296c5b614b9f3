import StoreRelayCore
public import StoreRelayCrypto

/// Verifies the `signedPayload` of an App Store Server Notification V2 and the signed data
/// nested in it, following StoreRelay's SPEC ("Verification (V2)").
///
/// Thread-safe; share one instance so the chain cache serves every request.
public final class NotificationVerifier: Sendable {
    /// The verifier for each JWS, with its chain cache and counters.
    public let signedData: SignedDataVerifier

    public init(configuration: VerifierConfiguration = VerifierConfiguration()) throws(CryptoError) {
        signedData = try SignedDataVerifier(configuration: configuration)
    }

    public init(signedData: SignedDataVerifier) {
        self.signedData = signedData
    }

    public var statistics: VerifierStatistics { signedData.statistics }

    /// Verifies a notification. Throws `.malformed` for what is not a notification JWS and
    /// `.signature` for what is not proven to be Apple's, and also for what Apple signed but
    /// StoreRelay cannot read (`read(signedPayload:)` tells that apart).
    public func verify(signedPayload: String) throws(VerificationError) -> VerifiedNotification {
        switch try read(signedPayload: signedPayload) {
        case .readable(let notification): return notification
        case .unreadable(let notification): throw notification.error
        }
    }

    /// Verifies a notification and tells a readable one from one Apple signed that StoreRelay
    /// does not understand. Throws only for what is not a notification JWS (`.malformed`) or
    /// not proven to be Apple's (`.signature`).
    public func read(signedPayload: String) throws(VerificationError) -> NotificationReading {
        let outer = try DecodedJWS(compact: signedPayload, headers: signedData.headers)
        let payload = outer.payload
        // The signature is checked before the payload is interpreted, so only data proven to be
        // Apple's can be called "not a notification". The one thing read first is the
        // environment, and it can only lower the bar for environments an operator opted into:
        // a notification whose environment cannot be read is checked against the roots
        // trusted for every environment.
        let claimed: Result<NotificationSubject, VerificationError>
        do throws(VerificationError) {
            claimed = .success(try NotificationSubject.read(payload))
        } catch {
            claimed = .failure(error)
        }
        let environment = try? claimed.get().environment
        let skip = environment.map { signedData.configuration.effectiveUnverifiedEnvironments.contains($0) } ?? false
        let verified = try signedData.verify(outer, at: .signedDate, for: environment, skippingSignature: skip)

        guard let type = payload["notificationType"]?.stringValue, !type.isEmpty else {
            throw .malformed(.notNotification, "the payload has no notificationType, so it is not a notification")
        }
        guard let uuid = payload["notificationUUID"]?.stringValue, !uuid.isEmpty else {
            throw .malformed(.notNotification, "the payload has no notificationUUID, so it is not a notification")
        }
        // From here on the payload is proven to be Apple's: what cannot be read is kept, not
        // refused, so a container or environment Apple adds tomorrow loses nothing. Unless its
        // signature was skipped (Xcode / LocalTesting by opt-in): then nothing is proven, and
        // what cannot be read is refused as before.
        func unreadable(_ error: VerificationError) throws(VerificationError) -> NotificationReading {
            if skip { throw error }
            return .unreadable(UnreadableNotification(
                payload: payload, environment: environment, signedDate: verified.effectiveDate,
                signatureVerified: verified.signatureVerified, error: error))
        }
        let subject: NotificationSubject
        switch claimed {
        case .success(let read): subject = read
        case .failure(let error): return try unreadable(error)
        }

        let data = payload["data"]?.objectValue
        let appData = payload["appData"]?.objectValue
        let transaction, renewal, appTransaction: VerifiedSignedData?
        do throws(VerificationError) {
            transaction = try nested("signedTransactionInfo", in: data, "data", subject, outer, skip)
            renewal = try nested("signedRenewalInfo", in: data, "data", subject, outer, skip)
            var inApp = try nested("signedAppTransactionInfo", in: appData, "appData", subject, outer, skip, at: .receiptCreationDate)
            if inApp == nil {
                inApp = try nested("signedAppTransactionInfo", in: data, "data", subject, outer, skip, at: .receiptCreationDate)
            }
            appTransaction = inApp
        } catch {
            return try unreadable(error)
        }

        return .readable(VerifiedNotification(
            payload: .object(payload),
            notificationType: type,
            subtype: payload["subtype"]?.stringValue,
            notificationUUID: uuid,
            version: payload["version"]?.stringValue,
            signedDate: verified.effectiveDate,
            environment: subject.environment,
            bundleId: subject.bundleId,
            appAppleId: subject.appAppleId,
            bundleVersion: subject.bundleVersion,
            transaction: transaction,
            renewal: renewal,
            appTransaction: appTransaction,
            signatureVerified: verified.signatureVerified
        ))
    }

    /// Verifies `container[field]` and checks it belongs to the same app and environment.
    /// With `.chainEquality` (the default), a value whose protected header is byte-equal to
    /// the notification's — the chain the outer check just verified — is covered by the outer
    /// signature, which signed its bytes; any other header gets the full check, at the
    /// value's own date (`signedDate`, or an app transaction's `receiptCreationDate`), as
    /// every value does with `.full`. Renewal info has no `bundleId` and old payloads no
    /// `environment`, so each is compared only when present.
    private func nested(
        _ field: String, in container: JSONObject?, _ containerName: String,
        _ subject: NotificationSubject, _ outer: DecodedJWS, _ skip: Bool, at dateField: DecodedJWS.DateField = .signedDate
    ) throws(VerificationError) -> VerifiedSignedData? {
        guard let value = container?[field], !value.isNull else { return nil }
        let path = "\(containerName).\(field)"
        guard let text = value.stringValue else {
            throw .malformed(.notNotification, "\(path) is not a string")
        }
        let result: VerifiedSignedData
        do {
            let decoded = try DecodedJWS(compact: text, headers: signedData.headers)
            if !skip, signedData.configuration.nestedSignatures == .chainEquality, decoded.hasSameHeader(as: outer) {
                result = try signedData.coveredByOuter(decoded, at: dateField)
            } else {
                result = try signedData.verify(decoded, at: dateField, for: subject.environment, skippingSignature: skip)
            }
        } catch {
            throw error.within(path)
        }
        if let name = result.environmentName, AppStoreEnvironment(appleName: name) != subject.environment {
            throw .signature(.nestedMismatch, "\(path) is for environment \"\(name.prefix(40))\" but the notification is for \(subject.environmentName)")
        }
        if let bundleId = result.bundleId, let outer = subject.bundleId, bundleId != outer {
            throw .signature(.nestedMismatch, "\(path) is for bundle \"\(bundleId.prefix(100))\" but the notification is for \"\(outer.prefix(100))\"")
        }
        return result
    }
}
