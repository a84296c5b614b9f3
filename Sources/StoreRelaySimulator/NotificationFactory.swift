public import StoreRelayCore

/// Builds and signs realistic App Store Server Notifications V2 with a `DevCertificateAuthority`,
/// for every type and subtype in `NotificationCatalog`.
///
/// The outer payload is `{notificationType, subtype?, notificationUUID, data | summary |
/// externalPurchaseToken | appData, version: "2.0", signedDate}`, member order as Apple's;
/// `data.signedTransactionInfo` / `signedRenewalInfo` and `appData.signedAppTransactionInfo`
/// are JWS signed by the same chain, consistent with the type (see SubscriptionScenario).
public struct NotificationFactory: Sendable {
    public let authority: DevCertificateAuthority
    /// Supplies `signedDate` and every date derived from it.
    public let clock: any TimeSource

    public init(authority: DevCertificateAuthority, clock: any TimeSource = WallClock()) {
        self.authority = authority
        self.clock = clock
    }

    /// A signed notification for `request`; throws a usage error for an unknown
    /// type/subtype or option.
    public func make(_ request: NotificationRequest) throws(SimulatorError) -> SimulatedNotification {
        try request.validate()
        let now = clock.now().milliseconds
        let signer = JWSSigner(authority: authority)

        var payload = OrderedFields([("notificationType", .string(request.type))])
        if let subtype = request.subtype { payload.set("subtype", .string(subtype)) }
        payload.set("notificationUUID", .string(RandomIdentifiers.uuid()))

        switch request.type {
        case "TEST":
            // Real TEST notifications carry only the app and environment (no bundleVersion).
            payload.set("data", OrderedFields([
                ("appAppleId", .integer(request.appAppleId)),
                ("bundleId", .string(request.bundleId)),
                ("environment", .string(request.appleEnvironment)),
            ]).value)
        case "RENEWAL_EXTENSION" where request.subtype == "SUMMARY":
            payload.set("summary", NotificationBodies.summary(request))
        case "EXTERNAL_PURCHASE_TOKEN":
            payload.set("externalPurchaseToken", NotificationBodies.externalPurchaseToken(request, subtype: request.subtype, now: now))
        case "RESCIND_CONSENT":
            let scenario = SubscriptionScenario(request: request, now: Timestamp(milliseconds: now))
            let appTransaction = NotificationBodies.appTransaction(request, now: now, appTransactionId: scenario.appTransactionId)
            payload.set("appData", OrderedFields([
                ("appAppleId", .integer(request.appAppleId)),
                ("bundleId", .string(request.bundleId)),
                ("environment", .string(request.appleEnvironment)),
                ("signedAppTransactionInfo", .string(try signer.sign(appTransaction))),
            ]).value)
        default:
            payload.set("data", try data(for: request, now: now, signer: signer))
        }
        payload.set("version", "2.0")
        payload.set("signedDate", .integer(now))

        let value = payload.value
        return SimulatedNotification(payload: value, signedPayload: try signer.sign(value))
    }

    /// `data` with the signed transaction and renewal info of a subscription in the state
    /// the type describes.
    private func data(for request: NotificationRequest, now: Int64, signer: JWSSigner) throws(SimulatorError) -> JSONValue {
        var scenario = SubscriptionScenario(request: request, now: Timestamp(milliseconds: now))
        scenario.apply(type: request.type, subtype: request.subtype)
        var data = OrderedFields([
            ("appAppleId", .integer(request.appAppleId)),
            ("bundleId", .string(request.bundleId)),
            ("bundleVersion", .string(request.bundleVersion)),
            ("environment", .string(request.appleEnvironment)),
            ("signedTransactionInfo", .string(try signer.sign(scenario.transaction.value))),
        ])
        if scenario.hasRenewal {
            data.set("signedRenewalInfo", .string(try signer.sign(scenario.renewal.value)))
            data.set("status", .integer(scenario.status))
        }
        if request.type == "CONSUMPTION_REQUEST" {
            // One of UNINTENDED_PURCHASE, FULFILLMENT_ISSUE, UNSATISFIED_WITH_PURCHASE, LEGAL, OTHER.
            data.set("consumptionRequestReason", "UNINTENDED_PURCHASE")
        }
        return data.value
    }
}
