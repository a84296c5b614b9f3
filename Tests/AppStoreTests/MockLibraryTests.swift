import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// Apple's own library test data (mock-apple-library/), signed by Apple's test CA.
@Suite(.enabled(if: Fixtures.haveVectors, "shared test vectors are absent (../shared/vectors)"))
struct MockLibraryTests {
    let directory = "mock-apple-library/"

    @Test func acceptsTestNotificationUnderTestCA() throws {
        // x5c[2] of this file is not testCA: accepted because x5c[2] is never used.
        let notification = try Fixtures.appleTestCAVerifier().verify(signedPayload: Fixtures.vector(directory + "mock_signed_data/testNotification"))
        #expect(notification.notificationType == "TEST")
        #expect(notification.subtype == nil)
        #expect(notification.notificationUUID == "9ad56bd2-0bc6-42e0-af24-fd996d87a1e6")
        #expect(notification.environment == .sandbox)
        #expect(notification.bundleId == "com.example")
        #expect(notification.appAppleId == 1234)
        #expect(notification.signedDate == Timestamp(milliseconds: 1681314324000))
        #expect(notification.signatureVerified)
    }

    @Test func acceptsTransactionAndRenewalUnderTestCA() throws {
        let verifier = try Fixtures.appleTestCAVerifier().signedData
        for name in ["transactionInfo", "renewalInfo"] {
            let decoded = try verifier.verify(Fixtures.vector(directory + "mock_signed_data/" + name))
            #expect(decoded.environment == .sandbox, "\(name)")
            #expect(decoded.effectiveDate == Timestamp(milliseconds: 1672956154000), "\(name)")
            #expect(decoded.signatureVerified)
        }
    }

    @Test func rejectsMissingX5CAndLegacyReceipts() throws {
        let verifier = try Fixtures.appleTestCAVerifier()
        let missing = verificationError { _ = try verifier.verify(signedPayload: Fixtures.vector(directory + "mock_signed_data/missingX5CHeaderClaim")) }
        #expect(missing?.code == .signature)
        #expect(missing?.reason == .invalidChainLength)
        let legacy = verificationError { _ = try verifier.verify(signedPayload: Fixtures.vector(directory + "mock_signed_data/legacyTransaction")) }
        #expect(legacy?.code == .malformed)
        #expect(legacy?.code.httpStatus == 400)
        // Authentic (testCA) but names no environment: Apple's libraries refuse it too.
        let wrongBundle = verificationError { _ = try verifier.verify(signedPayload: Fixtures.vector(directory + "mock_signed_data/wrongBundleId")) }
        #expect(wrongBundle?.code == .malformed)
        #expect(wrongBundle?.reason == .notNotification)
    }

    func chain(_ leaf: String, _ intermediate: String) throws -> TestCertificateAuthority.Chain {
        let certs = try [leaf, intermediate, "testCA.pem"].map { try TestCertificateAuthority.der(fromPEM: Fixtures.vector(directory + "certs/" + $0)) }
        return TestCertificateAuthority.Chain(certificatesDER: certs, leafKeyPath: Fixtures.vectorPath(directory + "certs/testLeaf.key"))
    }

    @Test func rejectsTheInvalidOIDChains() throws {
        let verifier = try Fixtures.appleTestCAVerifier()
        let payload = notificationPayload()
        // Positive control: the same key and payload with the proper chain verify.
        let good = try TestCertificateAuthority.signJWS(payload: payload, chain: chain("testLeaf.pem", "testIntermediate.pem"))
        #expect(try verifier.verify(signedPayload: good).notificationType == "DID_RENEW")

        let badLeaf = try TestCertificateAuthority.signJWS(payload: payload, chain: chain("testInvalidOIDLeaf.pem", "testIntermediate.pem"))
        let leafError = verificationError { _ = try verifier.verify(signedPayload: badLeaf) }
        #expect(leafError?.reason == .missingAppleOID)
        #expect(leafError?.message.contains("leaf") == true)

        let badIntermediate = try TestCertificateAuthority.signJWS(payload: payload, chain: chain("testInvalidIntermediateLeaf.pem", "testInvalidOIDIntermediate.pem"))
        let intermediateError = verificationError { _ = try verifier.verify(signedPayload: badIntermediate) }
        #expect(intermediateError?.reason == .missingAppleOID)
        #expect(intermediateError?.message.contains("intermediate") == true)
    }

    @Test func xcodeDataOnlyWithTheExplicitOption() throws {
        let files = ["xcode-signed-app-transaction", "xcode-signed-renewal-info", "xcode-signed-transaction"]
        let strict = try SignedDataVerifier()
        let localOnly = try SignedDataVerifier(configuration: VerifierConfiguration(unverifiedEnvironments: [.localtesting]))
        let xcode = try SignedDataVerifier(configuration: VerifierConfiguration(unverifiedEnvironments: [.xcode]))
        for file in files {
            let jws = try Fixtures.vector(directory + "xcode/" + file)
            let strictError = verificationError { _ = try strict.verify(jws) }
            #expect(strictError?.code == .signature, "\(file)")
            #expect(strictError?.reason == .invalidChainLength, "\(file)")
            #expect(verificationError { _ = try localOnly.verify(jws) }?.code == .signature)
            let decoded = try xcode.verify(jws)
            #expect(decoded.environment == .xcode, "\(file)")
            #expect(!decoded.signatureVerified)
        }
        // The fractional signedDate of the renewal info is read as a number of milliseconds.
        let renewal = try xcode.verify(Fixtures.vector(directory + "xcode/xcode-signed-renewal-info"))
        #expect(renewal.effectiveDate == Timestamp(milliseconds: 1697679936711))
        #expect(xcode.statistics.unverifiedAccepted == 4)
        #expect(xcode.statistics.signatureVerifications == 0)
    }
}
