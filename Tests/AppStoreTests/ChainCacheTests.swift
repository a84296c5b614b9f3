import Foundation
import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// The chain cache: one ECDSA verification per JWS once a chain is known.
@Suite struct ChainCacheTests {
    let authority = Fixtures.authority

    /// With `verify-nested yes`, one signature check per JWS; by default one per
    /// notification, its nested JWS (same header) covered by the outer signature.
    @Test func steadyStreamCostsOneSignatureCheckPerJWS() throws {
        let now = Timestamp.now().milliseconds
        let nested = try authority.signJWS(payload: #"{"transactionId":"1","bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(now)}"#)
        let jws = try authority.signJWS(payload: notificationPayload(extraData: #","signedTransactionInfo":"\#(nested)""#))

        let full = try Fixtures.testRootVerifier { $0.nestedSignatures = .full }
        for _ in 0..<5 { _ = try full.verify(signedPayload: jws) }
        #expect(full.statistics.chainVerifications == 1)
        #expect(full.statistics.signatureVerifications == 10)
        #expect(full.statistics.chainCacheHits == 9)
        #expect(full.statistics.nestedChainMatches == 0)

        let verifier = try Fixtures.testRootVerifier()
        for _ in 0..<5 { _ = try verifier.verify(signedPayload: jws) }
        #expect(verifier.statistics.chainVerifications == 1)
        #expect(verifier.statistics.signatureVerifications == 5)
        #expect(verifier.statistics.chainCacheHits == 4)
        #expect(verifier.statistics.nestedChainMatches == 5)
    }

    @Test func validityIsStillCheckedOnACacheHit() throws {
        let verifier = try Fixtures.testRootVerifier()
        _ = try verifier.verify(signedPayload: authority.signJWS(payload: notificationPayload()))
        let old = try authority.signJWS(payload: notificationPayload(signedDate: 946_684_800_000))
        let error = verificationError { _ = try verifier.verify(signedPayload: old) }
        #expect(error?.reason == .certificateExpired)
        #expect(verifier.statistics.chainVerifications == 1)
        #expect(verifier.statistics.chainCacheHits == 1)
        let future = try authority.signJWS(payload: notificationPayload(signedDate: Timestamp.now().milliseconds + 20 * 365 * 86_400_000))
        #expect(verificationError { _ = try verifier.verify(signedPayload: future) }?.reason == .certificateExpired)
    }

    @Test func failuresAreNotCachedAndTheCacheIsBounded() throws {
        let other = try TestCertificateAuthority()
        var configuration = VerifierConfiguration(trustedRoots: [
            try Certificate(pemString: authority.rootPEM), try Certificate(pemString: other.rootPEM),
        ])
        configuration.chainCacheCapacity = 1
        let verifier = try NotificationVerifier(configuration: configuration)
        let unknown = try authority.signJWS(payload: notificationPayload(), variant: .unknownRoot)
        for _ in 0..<2 { _ = verificationError { _ = try verifier.verify(signedPayload: unknown) } }
        #expect(verifier.statistics.chainVerifications == 2)

        // Two chains with different leaves alternate through a one-entry cache.
        let first = try authority.signJWS(payload: notificationPayload())
        let second = try other.signJWS(payload: notificationPayload())
        for _ in 0..<3 {
            _ = try verifier.verify(signedPayload: first)
            _ = try verifier.verify(signedPayload: second)
        }
        #expect(verifier.statistics.chainVerifications == 2 + 6)
        _ = try verifier.verify(signedPayload: second)
        #expect(verifier.statistics.chainVerifications == 8)
        #expect(verifier.statistics.chainCacheHits == 1)
    }

    /// `x5c[2]` takes no part in verification, so it is no part of the cache key: varying
    /// it (security review, finding 3) never costs a chain build. It must still be a
    /// certificate, cached or not.
    @Test func varyingTheThirdCertificateCostsNoChainBuild() throws {
        let verifier = try Fixtures.testRootVerifier()
        let valid = try authority.signJWS(payload: notificationPayload())
        let otherRoot = try authority.signJWS(payload: notificationPayload(), variant: .mismatchedX5CRoot)
        for _ in 0..<3 {
            _ = try verifier.verify(signedPayload: valid)
            _ = try verifier.verify(signedPayload: otherRoot)
        }
        #expect(verifier.statistics.chainVerifications == 1)

        // Each forged header names another x5c[2] and so fails its signature, after the cache
        // hit: no chain work, whatever the third certificate.
        let chain = authority.chain(.valid)
        let thirds = [chain.x5c[1], Base64.encode(try TestCertificateAuthority.der(fromPEM: authority.unknownRootPEM)), chain.x5c[0]]
        for third in thirds {
            let header = #"{"alg":"ES256","x5c":["\#(chain.x5c[0])","\#(chain.x5c[1])","\#(third)"]}"#
            let parts = valid.split(separator: ".")
            let forged = Base64.urlEncode(Array(header.utf8)) + "." + parts[1] + "." + parts[2]
            #expect(verificationError { _ = try verifier.verify(signedPayload: forged) }?.reason == .invalidSignature)
        }
        #expect(verifier.statistics.chainVerifications == 1)
        let garbage = #"{"alg":"ES256","x5c":["\#(chain.x5c[0])","\#(chain.x5c[1])","AAAA"]}"#
        let parts = valid.split(separator: ".")
        let withGarbage = Base64.urlEncode(Array(garbage.utf8)) + "." + parts[1] + "." + parts[2]
        #expect(verificationError { _ = try verifier.verify(signedPayload: withGarbage) }?.reason == .invalidCertificate)
    }

    /// A cache hit judges a chain's validity window exactly as OpenSSL judges the chain on a
    /// miss, to the second, at both ends: the same JWS at each second around the chain's
    /// latest `notBefore` and earliest `notAfter` gets one verdict from a cold verifier and
    /// from a warm one.
    @Test func aCacheHitJudgesTheValidityWindowAsOpenSSLDoes() throws {
        let certificates = try authority.chain(.valid).certificatesDER.map { try Certificate(derBytes: $0) }
        let validFrom = certificates.map(\.notBefore).max()!.milliseconds
        let validUntil = certificates.map(\.notAfter).min()!.milliseconds
        let warm = try Fixtures.testRootVerifier()
        _ = try warm.verify(signedPayload: authority.signJWS(payload: notificationPayload()))
        var verdicts: [Bool] = []
        for edge in [validFrom, validUntil] {
            for offset: Int64 in [-1_000, -1, 0, 999, 1_000] {
                let jws = try authority.signJWS(payload: notificationPayload(signedDate: edge + offset))
                let cold = try Fixtures.testRootVerifier()
                let byOpenSSL = (try? cold.verify(signedPayload: jws)) != nil
                let byCache = (try? warm.verify(signedPayload: jws)) != nil
                #expect(cold.statistics.chainCacheHits == 0)
                #expect(byCache == byOpenSSL, "signedDate \(edge + offset) (edge \(edge), offset \(offset) ms)")
                verdicts.append(byOpenSSL)
            }
        }
        #expect(warm.statistics.chainVerifications == 1)
        // Both ends were crossed: each edge has valid and invalid seconds around it.
        #expect(verdicts[0..<5].contains(true) && verdicts[0..<5].contains(false))
        #expect(verdicts[5..<10].contains(true) && verdicts[5..<10].contains(false))
    }

    /// A signature that cannot be valid is refused before any chain work.
    @Test func aMisshapenSignatureCostsNoChainBuild() throws {
        let verifier = try Fixtures.testRootVerifier()
        let parts = try authority.signJWS(payload: notificationPayload()).split(separator: ".")
        let order = "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551"
        let orderBytes = stride(from: 0, to: 64, by: 2).map { UInt8(order.dropFirst($0).prefix(2), radix: 16)! }
        let misshapen: [[UInt8]] = [
            [], [UInt8](repeating: 1, count: 63), [UInt8](repeating: 1, count: 65), [UInt8](repeating: 0, count: 64),
            [UInt8](repeating: 0, count: 32) + [UInt8](repeating: 1, count: 32), orderBytes + orderBytes,
            [UInt8](repeating: 0xFF, count: 64),
        ]
        for signature in misshapen {
            let jws = parts[0] + "." + parts[1] + "." + Base64.urlEncode(signature)
            #expect(verificationError { _ = try verifier.verify(signedPayload: jws) }?.reason == .invalidSignature)
        }
        #expect(verifier.statistics.chainVerifications == 0)
    }

    @Test func concurrentVerificationsShareTheCache() throws {
        let verifier = try Fixtures.testRootVerifier()
        let jws = try authority.signJWS(payload: notificationPayload())
        _ = try verifier.verify(signedPayload: jws)
        let failures = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            do { _ = try verifier.verify(signedPayload: jws) } catch { failures.withLock { $0 += 1 } }
        }
        #expect(failures.current == 0)
        #expect(verifier.statistics.signatureVerifications == 65)
        #expect(verifier.statistics.chainVerifications == 1)
    }
}
