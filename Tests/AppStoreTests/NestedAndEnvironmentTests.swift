import Foundation
import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// Nested signed data and where the environment comes from.
@Suite struct NestedAndEnvironmentTests {
    let authority = Fixtures.authority
    var now: Int64 { Timestamp.now().milliseconds }

    func transaction(bundleId: String = "com.example.app", environment: String = "Sandbox", date: Int64? = nil,
                     variant: TestCertificateAuthority.Variant = .valid) throws -> String {
        try authority.signJWS(payload: #"{"transactionId":"42","bundleId":"\#(bundleId)","environment":"\#(environment)","signedDate":\#(date ?? now)}"#, variant: variant)
    }

    func notification(nested: String) throws -> String {
        try authority.signJWS(payload: notificationPayload(extraData: nested))
    }

    @Test func verifiesAndDecodesNestedData() throws {
        let renewalDate = now - 5
        let renewal = try authority.signJWS(payload: #"{"autoRenewStatus":1,"environment":"Sandbox","signedDate":\#(renewalDate)}"#)
        let jws = try notification(nested: #","signedTransactionInfo":"\#(try transaction())","signedRenewalInfo":"\#(renewal)""#)
        let result = try Fixtures.testRootVerifier().verify(signedPayload: jws)
        #expect(result.transaction?.payload["transactionId"]?.stringValue == "42")
        #expect(result.transaction?.signatureVerified == true)
        #expect(result.renewal?.payload["autoRenewStatus"]?.int64Value == 1)
        #expect(result.renewal?.effectiveDate == Timestamp(milliseconds: renewalDate))
        #expect(result.appTransaction == nil)
        #expect(result.data?["bundleVersion"]?.stringValue == "7")
    }

    /// Apple's `AppTransaction` has no `signedDate`; Apple's libraries verify it at its
    /// `receiptCreationDate`, and so do we, wherever it is nested or when verified alone.
    @Test func appTransactionsAreVerifiedAtTheirReceiptCreationDate() throws {
        func appTransaction(created: Int64, signedDate: Int64? = nil) throws -> String {
            let signed = signedDate.map { #","signedDate":\#($0)"# } ?? ""
            return try authority.signJWS(payload: #"{"receiptType":"Sandbox","bundleId":"com.example.app","appTransactionId":"7","receiptCreationDate":\#(created)\#(signed)}"#)
        }
        func notification(appTransaction: String) throws -> String {
            let date = now
            return try authority.signJWS(payload: #"{"notificationType":"RESCIND_CONSENT","notificationUUID":"\#(UUID().uuidString.lowercased())","appData":{"appAppleId":1234,"bundleId":"com.example.app","environment":"Sandbox","signedAppTransactionInfo":"\#(appTransaction)"},"version":"2.0","signedDate":\#(date)}"#)
        }
        let verifier = try Fixtures.testRootVerifier()
        // A minute ahead: the shared test CA may have been created this very second.
        let created = now + 60_000
        let fresh = try appTransaction(created: created)
        let result = try verifier.verify(signedPayload: notification(appTransaction: fresh))
        #expect(result.appTransaction?.effectiveDate == Timestamp(milliseconds: created))
        #expect(result.appTransaction?.signatureVerified == true)
        #expect(try verifier.signedData.verify(fresh).signatureVerified)

        // Created in 2000, before the test CA existed: rejected even with a current signedDate,
        // because receiptCreationDate is the date that counts — when nested JWS are verified
        // on their own (`verify-nested yes`), and always when verified alone.
        let old = try appTransaction(created: 946_684_800_000, signedDate: now)
        let full = try Fixtures.testRootVerifier { $0.nestedSignatures = .full }
        let nestedError = verificationError { _ = try full.verify(signedPayload: notification(appTransaction: old)) }
        #expect(nestedError?.reason == .certificateExpired)
        #expect(nestedError?.message.hasPrefix("appData.signedAppTransactionInfo:") == true)
        #expect(verificationError { _ = try verifier.signedData.verify(old) }?.reason == .certificateExpired)
        // By default its header is the notification's: covered by the notification's
        // signature, its chain judged at the notification's signedDate, its date only read.
        let covered = try verifier.verify(signedPayload: notification(appTransaction: old))
        #expect(covered.appTransaction?.coveredByOuterSignature == true)
        #expect(covered.appTransaction?.effectiveDate == Timestamp(milliseconds: 946_684_800_000))

        // A transaction is still judged by its signedDate, whatever else it carries.
        let transaction = try authority.signJWS(payload: #"{"transactionId":"1","bundleId":"com.example.app","environment":"Sandbox","receiptCreationDate":946684800000,"signedDate":\#(now)}"#)
        #expect(try verifier.signedData.verify(transaction).signatureVerified)

        let unreadable = try authority.signJWS(payload: #"{"receiptType":"Sandbox","receiptCreationDate":"yesterday"}"#)
        let dateError = verificationError { _ = try verifier.signedData.verify(unreadable) }
        #expect(dateError?.code == .malformed)
        #expect(dateError?.message.contains("receiptCreationDate") == true)
    }

    @Test func rejectsNestedDataForAnotherAppOrEnvironment() throws {
        let verifier = try Fixtures.testRootVerifier()
        let otherApp = try notification(nested: #","signedTransactionInfo":"\#(try transaction(bundleId: "com.other"))""#)
        let appError = verificationError { _ = try verifier.verify(signedPayload: otherApp) }
        #expect(appError?.reason == .nestedMismatch)
        #expect(appError?.code == .signature)
        #expect(appError?.message.contains("data.signedTransactionInfo") == true)

        let otherEnvironment = try notification(nested: #","signedTransactionInfo":"\#(try transaction(environment: "Production"))""#)
        #expect(verificationError { _ = try verifier.verify(signedPayload: otherEnvironment) }?.reason == .nestedMismatch)
    }

    @Test func nestedDataIsVerifiedOnItsOwn() throws {
        let verifier = try Fixtures.testRootVerifier()
        let full = try Fixtures.testRootVerifier { $0.nestedSignatures = .full }
        // A chain other than the notification's gets the full check in both modes.
        let forged = try notification(nested: #","signedTransactionInfo":"\#(try transaction(variant: .unknownRoot))""#)
        for checking in [verifier, full] {
            let forgedError = verificationError { _ = try checking.verify(signedPayload: forged) }
            #expect(forgedError?.reason == .untrustedChain)
            #expect(forgedError?.message.hasPrefix("data.signedTransactionInfo:") == true)
        }
        // With verify-nested yes its own signedDate (year 2000, before the test CA existed)
        // is used, not the outer one; by default the outer check's date covers its chain.
        let old = try notification(nested: #","signedTransactionInfo":"\#(try transaction(date: 946_684_800_000))""#)
        #expect(verificationError { _ = try full.verify(signedPayload: old) }?.reason == .certificateExpired)
        #expect(try verifier.verify(signedPayload: old).transaction?.coveredByOuterSignature == true)
        let notString = try notification(nested: #","signedTransactionInfo":42"#)
        #expect(verificationError { _ = try verifier.verify(signedPayload: notString) }?.code == .malformed)
        let notJWS = try notification(nested: #","signedRenewalInfo":"abc""#)
        #expect(verificationError { _ = try verifier.verify(signedPayload: notJWS) }?.code == .malformed)
    }

    /// `jws` with its signature replaced by a well-formed one over other data: what only a
    /// fault on the signer's side could put inside a payload it then signs.
    func withBrokenSignature(_ jws: String) throws -> String {
        let other = try authority.signJWS(payload: #"{"other":true}"#)
        return jws.split(separator: ".")[0...1].joined(separator: ".") + "." + other.split(separator: ".")[2]
    }

    /// The default (`verify-nested no`): a nested JWS whose header is byte for byte the
    /// notification's costs no signature check of its own — the outer signature covers its
    /// bytes — so even one whose own signature is broken is accepted, marked as covered.
    /// `verify-nested yes` refuses it as before: unreadable, so the gateway quarantines it.
    @Test func aNestedJWSWithTheNotificationsHeaderIsCoveredByItsSignature() throws {
        let broken = try withBrokenSignature(transaction())
        let jws = try notification(nested: #","signedTransactionInfo":"\#(broken)""#)

        let verifier = try Fixtures.testRootVerifier()
        let accepted = try verifier.verify(signedPayload: jws)
        #expect(accepted.transaction?.payload["transactionId"]?.stringValue == "42")
        #expect(accepted.transaction?.coveredByOuterSignature == true)
        #expect(accepted.transaction?.signatureVerified == true)
        #expect(accepted.signatureVerified)
        #expect(verifier.statistics.signatureVerifications == 1)
        #expect(verifier.statistics.nestedChainMatches == 1)

        let full = try Fixtures.testRootVerifier { $0.nestedSignatures = .full }
        guard case .unreadable(let refused) = try full.read(signedPayload: jws) else {
            Issue.record("verify-nested yes accepted a nested JWS whose signature is broken")
            return
        }
        #expect(refused.error.reason == .invalidSignature)
        #expect(refused.error.message.hasPrefix("data.signedTransactionInfo:"))
        #expect(full.statistics.signatureVerifications == 2)
        #expect(full.statistics.nestedChainMatches == 0)
        // A sound nested JWS is checked on its own with verify-nested yes, never marked covered.
        let sound = try full.verify(signedPayload: notification(nested: #","signedTransactionInfo":"\#(try transaction())""#))
        #expect(sound.transaction?.coveredByOuterSignature == false)
    }

    /// The outer signature covers the nested JWS byte for byte: changing any of a nested
    /// value's bytes after Apple signed the notification — its payload, its signature, or
    /// swapping it for another genuine one — breaks the outer signature, in either mode.
    @Test func tamperingWithNestedBytesBreaksTheOuterSignature() throws {
        let genuine = try transaction()
        let jws = try notification(nested: #","signedTransactionInfo":"\#(genuine)""#)
        let parts = jws.split(separator: ".").map(String.init)
        let payload = String(decoding: try #require(Base64.urlDecode(parts[1])), as: UTF8.self)
        let nestedParts = genuine.split(separator: ".").map(String.init)
        let otherPayload = Base64.urlEncode(Array(#"{"transactionId":"43","bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(now)}"#.utf8))
        let replacements = [
            nestedParts[0] + "." + otherPayload + "." + nestedParts[2],
            try withBrokenSignature(genuine),
            try transaction(),
        ]
        for replacement in replacements {
            #expect(replacement != genuine)
            let tampered = payload.replacingOccurrences(of: genuine, with: replacement)
            #expect(tampered != payload)
            let forged = parts[0] + "." + Base64.urlEncode(Array(tampered.utf8)) + "." + parts[2]
            for nested in [NestedSignatureCheck.chainEquality, .full] {
                let verifier = try Fixtures.testRootVerifier { $0.nestedSignatures = nested }
                #expect(verificationError { _ = try verifier.read(signedPayload: forged) }?.reason == .invalidSignature)
            }
        }
    }

    /// A nested JWS whose header differs from the notification's (another leaf, another
    /// chain) is verified in full by default: accepted when its own signature and chain hold,
    /// unreadable (quarantined by the gateway) as before when they do not.
    @Test func aNestedJWSWithAnotherChainGetsTheFullCheck() throws {
        let other = try TestCertificateAuthority()
        let verifier = try NotificationVerifier(configuration: VerifierConfiguration(trustedRoots: [
            try Certificate(pemString: authority.rootPEM), try Certificate(pemString: other.rootPEM),
        ]))
        let payload = #"{"transactionId":"7","bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(now)}"#
        let otherLeaf = try other.signJWS(payload: payload)
        let accepted = try verifier.verify(signedPayload: notification(nested: #","signedTransactionInfo":"\#(otherLeaf)""#))
        #expect(accepted.transaction?.coveredByOuterSignature == false)
        #expect(accepted.transaction?.payload["transactionId"]?.stringValue == "7")
        #expect(verifier.statistics.signatureVerifications == 2)
        #expect(verifier.statistics.nestedChainMatches == 0)

        let brokenOther = try withBrokenSignature(otherLeaf)
        guard case .unreadable(let refused) = try verifier.read(signedPayload: notification(nested: #","signedTransactionInfo":"\#(brokenOther)""#)) else {
            Issue.record("a nested JWS of another chain with a broken signature was accepted")
            return
        }
        #expect(refused.error.reason == .invalidSignature)
        #expect(refused.error.message.hasPrefix("data.signedTransactionInfo:"))
        // The same header with another alg is another header: checked in full, refused.
        let noneHeader = Base64.urlEncode(Array(#"{"alg":"none"}"#.utf8)) + "." + Base64.urlEncode(Array(payload.utf8)) + "."
        guard case .unreadable(let unsigned) = try verifier.read(signedPayload: notification(nested: #","signedRenewalInfo":"\#(noneHeader)AA""#)) else {
            Issue.record("an unsigned nested JWS was accepted")
            return
        }
        #expect(unsigned.error.reason == .unsupportedAlgorithm)
    }

    func sign(_ payload: String) throws -> String { try authority.signJWS(payload: payload) }

    @Test func environmentFromSummaryTokenAndAppData() throws {
        let verifier = try Fixtures.testRootVerifier()
        let summary = try verifier.verify(signedPayload: sign(#"{"notificationType":"RENEWAL_EXTENSION","subtype":"SUMMARY","notificationUUID":"u1","signedDate":\#(now),"summary":{"environment":"LocalTesting","appAppleId":41234,"bundleId":"com.example","succeededCount":5}}"#))
        #expect(summary.environment == .localtesting)
        #expect(summary.appAppleId == 41234)
        #expect(summary.summary?["succeededCount"]?.int64Value == 5)

        for (id, expected) in [("SANDBOX_b2158121-7af9-49d4-9561-1f588205523e", AppStoreEnvironment.sandbox), ("b2158121-7af9-49d4-9561-1f588205523e", .production)] {
            let token = try verifier.verify(signedPayload: sign(#"{"notificationType":"EXTERNAL_PURCHASE_TOKEN","subtype":"UNREPORTED","notificationUUID":"u2","signedDate":\#(now),"externalPurchaseToken":{"externalPurchaseId":"\#(id)","appAppleId":55555,"bundleId":"com.example"}}"#))
            #expect(token.environment == expected)
            #expect(token.bundleId == "com.example")
            #expect(token.externalPurchaseToken?["externalPurchaseId"]?.stringValue == id)
        }

        let appTransaction = try sign(#"{"receiptType":"LocalTesting","bundleId":"com.example","signedDate":\#(now)}"#)
        let rescind = try verifier.verify(signedPayload: sign(#"{"notificationType":"RESCIND_CONSENT","notificationUUID":"u3","signedDate":\#(now),"appData":{"appAppleId":41234,"bundleId":"com.example","environment":"LocalTesting","signedAppTransactionInfo":"\#(appTransaction)"}}"#))
        #expect(rescind.environment == .localtesting)
        #expect(rescind.appTransaction?.payload["receiptType"]?.stringValue == "LocalTesting")
        #expect(rescind.appTransaction?.signatureVerified == true)

        let unknown = try sign(#"{"notificationType":"TEST","notificationUUID":"u4","signedDate":\#(now),"data":{"environment":"Staging"}}"#)
        #expect(verificationError { _ = try verifier.verify(signedPayload: unknown) }?.reason == .notNotification)
    }

    /// Once the outer signature is proven Apple's, what this build cannot read is reported as
    /// unreadable, with the payload, so the gateway can keep it; what is not proven stays an error.
    @Test func appleSignedButUnreadableIsToldApartFromUnproven() throws {
        let verifier = try Fixtures.testRootVerifier()
        func reading(_ jws: String) throws -> UnreadableNotification? {
            guard case .unreadable(let notification) = try verifier.read(signedPayload: jws) else { return nil }
            return notification
        }
        let staging = try reading(sign(#"{"notificationType":"TEST","notificationUUID":"u5","signedDate":\#(now),"data":{"environment":"Staging","bundleId":"com.example"}}"#))
        #expect(staging?.environment == nil)
        #expect(staging?.error.message.contains("Staging") == true)
        #expect(staging?.payload["data"]?["bundleId"]?.stringValue == "com.example")
        #expect(staging?.signatureVerified == true)

        let signed = now
        let container = try reading(sign(#"{"notificationType":"NEW_THING","notificationUUID":"u6","signedDate":\#(signed),"futureContainer":{"environment":"Sandbox"}}"#))
        #expect(container?.error.message.contains("none of data") == true)
        #expect(container?.signedDate == Timestamp(milliseconds: signed))

        let mismatch = try reading(notification(nested: #","signedTransactionInfo":"\#(try transaction(bundleId: "com.other"))""#))
        #expect(mismatch?.environment == .sandbox)
        #expect(mismatch?.error.reason == .nestedMismatch)
        let nestedForgery = try reading(notification(nested: #","signedTransactionInfo":"\#(try transaction(variant: .unknownRoot))""#))
        #expect(nestedForgery?.error.reason == .untrustedChain)

        // A readable one reads as readable.
        guard case .readable = try verifier.read(signedPayload: notification(nested: "")) else {
            Issue.record("a readable notification was reported unreadable")
            return
        }
        // Not proven to be Apple's, or not a notification at all: still refused.
        let forged = try authority.signJWS(payload: #"{"notificationType":"TEST","notificationUUID":"u7","signedDate":\#(now),"data":{"environment":"Staging"}}"#, variant: .unknownRoot)
        #expect(verificationError { _ = try verifier.read(signedPayload: forged) }?.reason == .untrustedChain)
        let noUUID = try sign(#"{"notificationType":"TEST","signedDate":\#(now),"data":{"environment":"Staging"}}"#)
        #expect(verificationError { _ = try verifier.read(signedPayload: noUUID) }?.reason == .notNotification)
    }

    /// A notification naming no known environment is checked against the roots trusted for
    /// every environment, never against one trusted only for sandbox.
    @Test func anUnknownEnvironmentNeedsARootTrustedEverywhere() throws {
        let root = try Certificate(pemString: authority.rootPEM)
        let sandboxOnly = try NotificationVerifier(configuration: VerifierConfiguration(
            trustedRoots: [AppleRootCertificates.appleRootCAG3], environmentRoots: [.sandbox: [root]]))
        #expect(throws: Never.self) { try sandboxOnly.verify(signedPayload: notification(nested: "")) }
        let staging = try sign(#"{"notificationType":"TEST","notificationUUID":"u8","signedDate":\#(now),"data":{"environment":"Staging"}}"#)
        #expect(verificationError { _ = try sandboxOnly.read(signedPayload: staging) }?.reason == .untrustedChain)
    }

    @Test(.enabled(if: Fixtures.haveVectors, "shared test vectors are absent"))
    func appleModelShapes() throws {
        // Apple's own decoded-payload shapes, re-signed by the test CA at the current time.
        let verifier = try Fixtures.testRootVerifier()
        let expected: [String: AppStoreEnvironment] = [
            "models_signedSummaryNotification.json": .localtesting,
            "models_signedExternalPurchaseTokenNotification.json": .production,
            "models_signedExternalPurchaseTokenSandboxNotification.json": .sandbox,
        ]
        for (file, environment) in expected {
            let payload = try Fixtures.vector("mock-apple-library/" + file).replacingOccurrences(of: "1698148900000", with: String(now))
            let result = try verifier.verify(signedPayload: sign(payload))
            #expect(result.environment == environment, "\(file)")
        }
    }

    @Test func unverifiedEnvironmentsAreOptInAndNeverProductionOrSandbox() throws {
        let xcodePayload = #"{"notificationType":"TEST","notificationUUID":"x1","signedDate":\#(now),"data":{"environment":"Xcode","bundleId":"com.example"}}"#
        let forged = try authority.signJWS(payload: xcodePayload, variant: .unknownRoot)
        #expect(verificationError { _ = try Fixtures.testRootVerifier().verify(signedPayload: forged) }?.reason == .untrustedChain)
        let allowing = try Fixtures.testRootVerifier { $0.unverifiedEnvironments = [.xcode] }
        let accepted = try allowing.verify(signedPayload: forged)
        #expect(accepted.environment == .xcode)
        #expect(!accepted.signatureVerified)

        let production = try authority.signJWS(payload: notificationPayload(environment: "Production"), variant: .unknownRoot)
        let lenient = try Fixtures.testRootVerifier { $0.unverifiedEnvironments = Set(AppStoreEnvironment.allCases) }
        #expect(verificationError { _ = try lenient.verify(signedPayload: production) }?.reason == .untrustedChain)
        let sandbox = try authority.signJWS(payload: notificationPayload(environment: "Sandbox"), variant: .unknownRoot)
        #expect(verificationError { _ = try lenient.verify(signedPayload: sandbox) }?.reason == .untrustedChain)
    }
}
