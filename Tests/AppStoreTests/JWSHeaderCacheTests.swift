import Foundation
import Testing
@testable import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// The header memo: one decode for a header seen before, never the wrong header.
@Suite struct JWSHeaderCacheTests {
    let authority = Fixtures.authority

    /// A compact JWS with the given header JSON and payload (the signature is not checked here).
    func jws(header: String, payload: String = #"{"n":1}"#) -> String {
        Base64.urlEncode(Array(header.utf8)) + "." + Base64.urlEncode(Array(payload.utf8)) + "." + Base64.urlEncode([1, 2, 3])
    }

    @Test func aNotificationAndItsNestedJWSDecodeTheirSharedHeaderOnce() throws {
        let verifier = try Fixtures.testRootVerifier()
        let now = Timestamp.now().milliseconds
        let nested = try authority.signJWS(payload: #"{"transactionId":"1","bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(now)}"#)
        for _ in 0..<3 {
            let jws = try authority.signJWS(payload: notificationPayload(extraData: #","signedTransactionInfo":"\#(nested)""#))
            let verified = try verifier.verify(signedPayload: jws)
            #expect(verified.transaction != nil)
        }
        #expect(verifier.signedData.headers.count == 1)
    }

    @Test func aHeaderDifferingInOneByteIsDecodedAsItself() throws {
        let cache = JWSHeaderCache()
        let first = try DecodedJWS(compact: jws(header: #"{"alg":"ES256","kid":"a"}"#), headers: cache)
        let second = try DecodedJWS(compact: jws(header: #"{"alg":"ES256","kid":"b"}"#), headers: cache)
        let again = try DecodedJWS(compact: jws(header: #"{"alg":"ES256","kid":"a"}"#, payload: #"{"n":2}"#), headers: cache)
        #expect(first.header["kid"]?.stringValue == "a")
        #expect(second.header["kid"]?.stringValue == "b")
        #expect(again.header["kid"]?.stringValue == "a")
        #expect(again.payload["n"]?.int64Value == 2)
        #expect(cache.count == 2)
    }

    /// The digest the signature is checked against is SHA-256 of `header '.' payload`, whether
    /// the header was decoded now or continued from the cached state.
    @Test func theSigningInputDigestIsTheSameWithAndWithoutTheCache() throws {
        let cache = JWSHeaderCache()
        for payload in [#"{"n":1}"#, #"{"n":2,"pad":"\#(String(repeating: "p", count: 300))"}"#, "{}"] {
            let text = jws(header: #"{"alg":"ES256","x5c":["\#(String(repeating: "A", count: 2_000))"]}"#, payload: payload)
            let parts = text.split(separator: ".")
            let expected = SHA256.hash(Array((parts[0] + "." + parts[1]).utf8))
            #expect(try DecodedJWS(compact: text, headers: cache).signingInputDigest == expected)
            #expect(try DecodedJWS(compact: text).signingInputDigest == expected)
        }
        #expect(cache.count == 1)
    }

    @Test func isBoundedAndRemembersOnlyWhatDecoded() throws {
        let cache = JWSHeaderCache(capacity: 2)
        for index in 0..<5 { _ = try DecodedJWS(compact: jws(header: #"{"alg":"ES256","i":\#(index)}"#), headers: cache) }
        #expect(cache.count == 2)

        let fresh = JWSHeaderCache()
        let badBase64 = "e30*." + Base64.urlEncode(Array(#"{"n":1}"#.utf8)) + ".AQID"
        let notObject = jws(header: "[1]")
        for _ in 0..<2 {
            #expect(verificationError { _ = try DecodedJWS(compact: badBase64, headers: fresh) }?.reason == .invalidBase64)
            #expect(verificationError { _ = try DecodedJWS(compact: notObject, headers: fresh) }?.reason == .invalidJSON)
        }
        #expect(fresh.count == 0)

        let huge = jws(header: #"{"alg":"ES256","pad":""# + String(repeating: "x", count: 20_000) + #""}"#)
        _ = try DecodedJWS(compact: huge, headers: fresh)
        #expect(fresh.count == 0)
    }
}
