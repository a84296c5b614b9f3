import Foundation
import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// The chain cache: one ECDSA verification per JWS once a chain is known.
@Suite struct ChainCacheTests {
    let authority = Fixtures.authority

    @Test func steadyStreamCostsOneSignatureCheckPerJWS() throws {
        let verifier = try Fixtures.testRootVerifier()
        let now = Timestamp.now().milliseconds
        let nested = try authority.signJWS(payload: #"{"transactionId":"1","bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(now)}"#)
        let jws = try authority.signJWS(payload: notificationPayload(extraData: #","signedTransactionInfo":"\#(nested)""#))
        for _ in 0..<5 { _ = try verifier.verify(signedPayload: jws) }
        let stats = verifier.statistics
        #expect(stats.chainVerifications == 1)
        #expect(stats.signatureVerifications == 10)
        #expect(stats.chainCacheHits == 9)
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
        let verifier = try Fixtures.testRootVerifier { $0.chainCacheCapacity = 1 }
        let unknown = try authority.signJWS(payload: notificationPayload(), variant: .unknownRoot)
        for _ in 0..<2 { _ = verificationError { _ = try verifier.verify(signedPayload: unknown) } }
        #expect(verifier.statistics.chainVerifications == 2)

        // Two different x5c (only x5c[2] differs) alternate through a one-entry cache.
        let first = try authority.signJWS(payload: notificationPayload(), variant: .valid)
        let second = try authority.signJWS(payload: notificationPayload(), variant: .mismatchedX5CRoot)
        for _ in 0..<3 {
            _ = try verifier.verify(signedPayload: first)
            _ = try verifier.verify(signedPayload: second)
        }
        #expect(verifier.statistics.chainVerifications == 2 + 6)
        _ = try verifier.verify(signedPayload: second)
        #expect(verifier.statistics.chainVerifications == 8)
        #expect(verifier.statistics.chainCacheHits == 1)
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
