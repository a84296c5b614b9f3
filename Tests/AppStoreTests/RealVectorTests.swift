import Testing
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore

/// Real Apple-signed notifications and signed data, verified with the built-in Apple root.
@Suite(.enabled(if: Fixtures.haveVectors, "shared test vectors are absent (../shared/vectors)"))
struct RealVectorTests {
    @Test func builtInRootIsAppleRootCAG3() throws {
        let builtIn = AppleRootCertificates.appleRootCAG3
        #expect(SHA256.hexHash(builtIn.derBytes).uppercased() == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")
        let file = try Certificate(pemString: Fixtures.vector("AppleRootCA-G3.pem"))
        #expect(builtIn.derBytes == file.derBytes)
        #expect(VerifierConfiguration().trustedRoots.map(\.derBytes) == [file.derBytes])
    }

    /// Every JWS of Apple's notifications verified on its own (`verify-nested yes`), as
    /// before issue 31; `realNestedJWSShareTheirNotificationsHeader` covers the default.
    @Test func verifiesAllRealNotificationsWithTheirFacts() throws {
        var full = VerifierConfiguration()
        full.nestedSignatures = .full
        let verifier = try NotificationVerifier(configuration: full)
        let vectors = try Fixtures.manifest().filter { $0["file"]?.stringValue?.hasPrefix("real/v2-notifications/") == true }
        #expect(vectors.count == 23)
        for vector in vectors {
            let file = try #require(vector["file"]?.stringValue)
            let facts = try #require(vector["facts"])
            let jws = try Fixtures.vector(file)
            let notification: VerifiedNotification
            if facts["signedDate"]?.isNull ?? true {
                // #01 has no signedDate: at the current time its leaf (2023) has expired, as in
                // Apple's library; at its nested signedDate the whole chain was valid.
                let error = verificationError { _ = try verifier.verify(signedPayload: jws) }
                #expect(error?.code == .signature, "\(file)")
                #expect(error?.reason == .certificateExpired, "\(file)")
                let effective = try #require(vector["effectiveDate"]?.int64Value)
                #expect(effective == 1646387008254)
                var atThatTime = full
                atThatTime.clock = FixedClock(time: Timestamp(milliseconds: effective))
                notification = try NotificationVerifier(configuration: atThatTime).verify(signedPayload: jws)
            } else {
                notification = try verifier.verify(signedPayload: jws)
            }
            #expect(notification.signatureVerified)
            #expect(notification.notificationType == facts["notificationType"]?.stringValue, "\(file)")
            #expect(notification.subtype == facts["subtype"]?.stringValue, "\(file)")
            #expect(notification.notificationUUID == facts["notificationUUID"]?.stringValue, "\(file)")
            #expect(notification.version == facts["version"]?.stringValue, "\(file)")
            #expect(notification.signedDate?.milliseconds == facts["signedDate"]?.int64Value, "\(file)")
            if let iso = facts["signedDateISO"]?.stringValue { #expect(notification.signedDate?.iso8601 == iso) }
            let data = try #require(facts["data"])
            #expect(notification.environment == data["environment"]?.stringValue.flatMap(AppStoreEnvironment.init(appleName:)), "\(file)")
            #expect(notification.bundleId == data["bundleId"]?.stringValue, "\(file)")
            #expect(notification.appAppleId == data["appAppleId"]?.int64Value, "\(file)")
            #expect(notification.bundleVersion == data["bundleVersion"]?.stringValue, "\(file)")
            #expect(file.contains(notification.environment.rawValue), "\(file)")

            let nested = vector["nested"]?.objectValue ?? JSONObject()
            #expect((notification.transaction != nil) == (nested["signedTransactionInfo"] != nil), "\(file)")
            #expect((notification.renewal != nil) == (nested["signedRenewalInfo"] != nil), "\(file)")
            for (field, decoded) in [("signedTransactionInfo", notification.transaction), ("signedRenewalInfo", notification.renewal)] {
                guard let expected = nested[field]?["facts"]?.objectValue, let decoded else { continue }
                #expect(decoded.signatureVerified)
                for (key, value) in expected {
                    #expect(sameJSON(decoded.payload[key], value), "\(file) \(field).\(key)")
                }
                #expect(decoded.effectiveDate?.milliseconds == expected["signedDate"]?.int64Value)
            }
        }
        // 23 outer + their nested JWS, one signature check each; the chains are three leaves.
        let stats = verifier.statistics
        #expect(stats.chainVerifications <= 4)
        #expect(stats.chainCacheHits > 30)
    }

    @Test func verifiesRealSignedData() throws {
        let verifier = try SignedDataVerifier()
        let vectors = try Fixtures.manifest().filter { $0["file"]?.stringValue?.hasPrefix("real/signed-data/") == true }
        #expect(vectors.count == 6)
        for vector in vectors {
            let file = try #require(vector["file"]?.stringValue)
            let decoded = try verifier.verify(Fixtures.vector(file))
            #expect(decoded.signatureVerified)
            #expect(decoded.environment == .sandbox)
            for (key, value) in try #require(vector["facts"]?.objectValue) {
                #expect(sameJSON(decoded.payload[key], value), "\(file) \(key)")
            }
        }
    }

    /// Apple signs a notification and the JWS nested in it with one header (one leaf, one
    /// chain), so by default (`verify-nested no`) every real notification costs one
    /// signature check, its nested JWS covered by it, and reads the same as with `yes`.
    @Test func realNestedJWSShareTheirNotificationsHeader() throws {
        let vectors = try Fixtures.manifest().filter { $0["file"]?.stringValue?.hasPrefix("real/v2-notifications/") == true }
        var nestedCount = 0
        for vector in vectors {
            let file = try #require(vector["file"]?.stringValue)
            let jws = try Fixtures.vector(file)
            let time = try #require(vector["effectiveDate"]?.int64Value ?? vector["facts"]?["signedDate"]?.int64Value)
            var configuration = VerifierConfiguration(clock: FixedClock(time: Timestamp(milliseconds: time)))
            let verifier = try NotificationVerifier(configuration: configuration)
            configuration.nestedSignatures = .full
            let full = try NotificationVerifier(configuration: configuration)
            let covered = try verifier.verify(signedPayload: jws)
            let checked = try full.verify(signedPayload: jws)
            let nested = [covered.transaction, covered.renewal, covered.appTransaction].compactMap { $0 }
            nestedCount += nested.count
            #expect(nested.allSatisfy { $0.coveredByOuterSignature }, "\(file)")
            #expect(verifier.statistics.signatureVerifications == 1, "\(file)")
            #expect(verifier.statistics.nestedChainMatches == nested.count, "\(file)")
            #expect(full.statistics.signatureVerifications == 1 + nested.count, "\(file)")
            #expect(sameJSON(covered.transaction.map { .object($0.payload) }, checked.transaction.map { .object($0.payload) }), "\(file)")
            #expect(sameJSON(covered.renewal.map { .object($0.payload) }, checked.renewal.map { .object($0.payload) }), "\(file)")
        }
        #expect(nestedCount > 20)
    }

    @Test func tamperedNotificationsFailOnTheSignatureAfterTheChainPasses() throws {
        for file in ["negative/tampered_sandbox_DID_RENEW_4e0cec6a.jws", "negative/tampered_sandbox_SUBSCRIBED_RESUBSCRIBE_6fd84739.jws"] {
            let jws = try Fixtures.vector(file)
            let entry = try #require(try Fixtures.manifest().first { $0["file"]?.stringValue == file })
            // The second one has no signedDate: verify at its effective date so the (expired)
            // chain is judged when it was valid and the signature is what fails.
            let time = try #require(entry["effectiveDate"]?.int64Value)
            let verifier = try NotificationVerifier(configuration: VerifierConfiguration(clock: FixedClock(time: Timestamp(milliseconds: time))))
            let error = verificationError { _ = try verifier.verify(signedPayload: jws) }
            #expect(error?.code == .signature, "\(file)")
            #expect(error?.code.httpStatus == 401)
            #expect(error?.reason == .invalidSignature, "\(file): \(String(describing: error))")
            #expect(verifier.statistics.chainVerifications == 1, "the chain was verified before the signature")
            #expect(verifier.statistics.signatureVerifications == 1)
        }
    }

    @Test func rejectsMockDataUnderTheAppleRoot() throws {
        let error = verificationError { _ = try NotificationVerifier().verify(signedPayload: Fixtures.vector("mock-apple-library/mock_signed_data/testNotification")) }
        #expect(error?.reason == .untrustedChain)
    }
}
