import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// Inputs found while fuzzing notification bodies (Fuzz/, target FuzzNotification), kept so
/// the bugs they exposed stay fixed.
@Suite struct AppStoreFuzzRegressionTests {
    /// `depth` nested arrays around `0`: `[[...[0]...]]`.
    static func nested(_ depth: Int) -> String {
        String(repeating: "[", count: depth) + "0" + String(repeating: "]", count: depth)
    }

    /// A correctly signed notification whose transaction nested 63 levels deep (64 with the
    /// payload object) was accepted, and its normalized event, one level deeper, no longer
    /// parsed: the journal could not read back a notification already answered 200.
    @Test func signedPayloadNestedTooDeepIsMalformed() throws {
        let authority = Fixtures.authority
        let verifier = try Fixtures.testRootVerifier()
        let now = Timestamp.now().milliseconds
        let deep = try authority.signJWS(
            payload: #"{"bundleId":"com.example.app","environment":"Sandbox","signedDate":\#(now),"x":\#(Self.nested(63))}"#)
        let outer = try authority.signJWS(
            payload: notificationPayload(signedDate: now, extraData: #","signedTransactionInfo":"\#(deep)""#))
        let error = verificationError { _ = try verifier.verify(signedPayload: outer) }
        #expect(error?.code == .malformed)
        #expect(error?.reason == .invalidJSON)
    }

    /// The limit leaves room for the event (+1) and the journal record (+1) under 64, and
    /// accepts every depth up to it.
    @Test func payloadsUpToThirtyTwoLevelsDecode() throws {
        func jws(_ payload: String) -> String {
            Base64.urlEncode(Array(#"{"alg":"ES256"}"#.utf8)) + "." + Base64.urlEncode(Array(payload.utf8)) + ".AAAA"
        }
        let accepted = try DecodedJWS(compact: jws(#"{"a":\#(Self.nested(31))}"#))
        #expect(accepted.payload["a"] != nil)
        let error = verificationError { _ = try DecodedJWS(compact: jws(#"{"a":\#(Self.nested(32))}"#)) }
        #expect(error?.reason == .invalidJSON)
        // What the limit protects: the deepest accepted payload, two levels down, still parses.
        let stored: JSONValue = ["event": ["transaction": .object(accepted.payload)]]
        #expect(try JSONValue.parse(stored.serializedBytes()) == stored)
    }
}
