import StoreRelayVerification
import StoreRelayCore
import StoreRelaySimulator
import Testing

@Suite struct NotificationFactoryTests {
    static let authority = Result { try SimulatorFixtures.authority(clock: WallClock()) }

    /// Every catalog pair, in both environments Apple signs with its production chain.
    static let cases: [(String, String?, AppStoreEnvironment)] = NotificationCatalog.combinations.flatMap { pair in
        [AppStoreEnvironment.sandbox, .production].map { (pair.type, pair.subtype, $0) }
    }

    @Test(arguments: cases)
    func everyTypeVerifiesWithTheDevRootOnly(type: String, subtype: String?, environment: AppStoreEnvironment) throws {
        let authority = try Self.authority.get()
        let request = NotificationRequest(type: type, subtype: subtype, environment: environment,
                                          bundleId: "com.example.sim", appAppleId: 987_654_321)
        let notification = try NotificationFactory(authority: authority).make(request)

        let verified = try SimulatorFixtures.verifier(trusting: authority).verify(signedPayload: notification.signedPayload)
        #expect(verified.notificationType == type)
        #expect(verified.subtype == subtype)
        #expect(verified.environment == environment)
        #expect(verified.bundleId == "com.example.sim")
        #expect(verified.appAppleId == 987_654_321)
        #expect(verified.version == "2.0")
        #expect(verified.signatureVerified)
        #expect(verified.notificationUUID == notification.notificationUUID)

        switch type {
        case "TEST", "EXTERNAL_PURCHASE_TOKEN":
            #expect(verified.transaction == nil && verified.renewal == nil)
        case "RENEWAL_EXTENSION" where subtype == "SUMMARY":
            #expect(verified.summary?["succeededCount"] != nil)
            #expect(verified.transaction == nil)
        case "RESCIND_CONSENT":
            #expect(verified.data == nil)
            let app = try #require(verified.appTransaction)
            #expect(app.bundleId == "com.example.sim")
            #expect(app.environment == environment)
            // Like Apple's, it has no signedDate and is verified at its receiptCreationDate.
            #expect(app.payload["signedDate"] == nil)
            #expect(app.effectiveDate?.milliseconds == app.payload["receiptCreationDate"]?.int64Value)
        case "ONE_TIME_CHARGE":
            let transaction = try #require(verified.transaction)
            #expect(transaction.payload["type"]?.stringValue == "Consumable")
            #expect(verified.renewal == nil)
        default:
            let transaction = try #require(verified.transaction)
            let renewal = try #require(verified.renewal)
            #expect(transaction.bundleId == "com.example.sim")
            #expect(transaction.environment == environment)
            #expect(renewal.environment == environment)
            #expect(renewal.payload["originalTransactionId"] == transaction.payload["originalTransactionId"])
            #expect(verified.data?["status"]?.int64Value != nil)
        }
        if type == "EXTERNAL_PURCHASE_TOKEN" {
            let id = try #require(verified.externalPurchaseToken?["externalPurchaseId"]?.stringValue)
            #expect(id.hasPrefix("SANDBOX_") == (environment == .sandbox))
        }

        // The same notification from an untrusted root: the default verifier (Apple Root CA - G3
        // only) must refuse it, however Apple-like the chain looks.
        let error = #expect(throws: VerificationError.self) {
            try NotificationVerifier().verify(signedPayload: notification.signedPayload)
        }
        #expect(error?.code == .signature)
        #expect(error?.reason == .untrustedChain)
    }

    @Test func envelopeHeaderAndBodyLookLikeApples() throws {
        let authority = try Self.authority.get()
        let clock = FixedClock(instant: Timestamp(milliseconds: Timestamp.now().milliseconds / 1000 * 1000 + 123))
        let factory = NotificationFactory(authority: authority, clock: clock)
        let first = try factory.make(NotificationRequest(type: "DID_RENEW"))
        let second = try factory.make(NotificationRequest(type: "DID_RENEW"))

        let segments = first.signedPayload.split(separator: ".", omittingEmptySubsequences: false)
        #expect(segments.count == 3)
        let header = try JSONValue.parse(try #require(Base64.urlDecode(segments[0])))
        #expect(header["alg"]?.stringValue == "ES256")
        #expect(header["x5c"]?.arrayValue?.compactMap(\.stringValue) == authority.x5c)
        #expect(try #require(Base64.urlDecode(segments[2])).count == 64)

        let payload = first.payload
        #expect(payload.objectValue?.keys == ["notificationType", "notificationUUID", "data", "version", "signedDate"])
        #expect(payload["signedDate"]?.int64Value == clock.instant.milliseconds)
        let uuid = first.notificationUUID
        #expect(uuid.count == 36 && uuid == uuid.lowercased())
        #expect(Array(uuid)[14] == "4")
        #expect("89ab".contains(Array(uuid)[19]))
        #expect(second.notificationUUID != uuid)
        #expect(payload["data"]?.objectValue?.keys == ["appAppleId", "bundleId", "bundleVersion", "environment",
                                                       "signedTransactionInfo", "signedRenewalInfo", "status"])
        #expect(payload["data"]?["environment"]?.stringValue == "Sandbox")

        let body = try JSONValue.parse(first.httpBody)
        #expect(body.objectValue?.keys == ["signedPayload"])
        #expect(body["signedPayload"]?.stringValue == first.signedPayload)
    }

    @Test func unknownTypesAndSubtypesAreUsageErrors() throws {
        let factory = NotificationFactory(authority: try Self.authority.get())
        let cases: [(NotificationRequest, SimulatorError.Code, String)] = [
            (NotificationRequest(type: "DID_RENEWED"), .unknownType, "valid types: SUBSCRIBED"),
            (NotificationRequest(type: "did_renew"), .unknownType, "DID_RENEW"),
            (NotificationRequest(type: "EXPIRED", subtype: "GRACE_PERIOD"), .unknownSubtype,
             "valid subtypes: VOLUNTARY, BILLING_RETRY, PRICE_INCREASE, PRODUCT_NOT_FOR_SALE"),
            (NotificationRequest(type: "SUBSCRIBED"), .unknownSubtype, "needs --subtype: INITIAL_BUY, RESUBSCRIBE"),
            (NotificationRequest(type: "DID_RENEW", subtype: "UPGRADE"), .unknownSubtype, "BILLING_RECOVERY (or no --subtype)"),
            (NotificationRequest(type: "TEST", subtype: "SUMMARY"), .unknownSubtype, "TEST has no subtype"),
            (NotificationRequest(type: "TEST", environment: .xcode), .invalidOption, "sandbox or production"),
            (NotificationRequest(type: "TEST", bundleId: "com.example app"), .invalidOption, "bundle id"),
            (NotificationRequest(type: "TEST", appAppleId: 0), .invalidOption, "apple id"),
        ]
        for (request, code, fragment) in cases {
            let error = #expect(throws: SimulatorError.self) { try factory.make(request) }
            #expect(error?.code == code, "\(request.type)/\(request.subtype ?? "-")")
            #expect(error?.message.contains(fragment) == true, "\(error?.message ?? "")")
            #expect(error?.isUsageError == true)
        }
    }

    @Test func catalogListsEveryDocumentedTypeOnce() {
        let types = NotificationCatalog.all.map(\.type)
        #expect(Set(types).count == types.count)
        for type in ["SUBSCRIBED", "DID_CHANGE_RENEWAL_PREF", "DID_CHANGE_RENEWAL_STATUS", "OFFER_REDEEMED", "DID_RENEW",
                     "EXPIRED", "DID_FAIL_TO_RENEW", "GRACE_PERIOD_EXPIRED", "PRICE_INCREASE", "REFUND", "REFUND_DECLINED",
                     "REFUND_REVERSED", "CONSUMPTION_REQUEST", "RENEWAL_EXTENDED", "RENEWAL_EXTENSION", "REVOKE", "TEST",
                     "ONE_TIME_CHARGE", "EXTERNAL_PURCHASE_TOKEN", "RESCIND_CONSENT", "METADATA_UPDATE", "MIGRATION",
                     "PRICE_CHANGE"] {
            #expect(types.contains(type), "\(type)")
        }
        #expect(NotificationCatalog.subtypes(of: "EXTERNAL_PURCHASE_TOKEN") == ["UNREPORTED", "CREATED", "ACTIVE_TOKEN_REMINDER"])
        #expect(NotificationCatalog.listing.split(separator: "\n").count == types.count)
    }
}
