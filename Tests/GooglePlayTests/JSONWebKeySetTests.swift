import Foundation
import Testing
import StoreRelayGooglePlay
import StoreRelayCrypto
import StoreRelayCore

@Suite struct JSONWebKeySetTests {
    static let first = try! RSAPrivateKey.generate()
    static let second = try! RSAPrivateKey.generate()

    @Test func readsTheKeysByIdAndTheyVerify() throws {
        let document = try JSONWebKeySet.document([("one", Self.first.publicKey()), ("two", Self.second.publicKey())])
        let set = try JSONWebKeySet(json: Array(document.utf8))
        #expect(set.keys.keys.sorted() == ["one", "two"])
        let message = Array("signed".utf8)
        #expect(set.keys["one"]!.isValidRS256Signature(try Self.first.signRS256(message), for: message))
        #expect(!set.keys["two"]!.isValidRS256Signature(try Self.first.signRS256(message), for: message))
    }

    @Test func skipsKeysThatAreNotRS256SigningKeys() throws {
        let good = try JSONWebKeySet.document([("good", Self.first.publicKey())])
        let (n, e) = try Self.second.publicKey().components()
        let modulus = Base64.urlEncode(n), exponent = Base64.urlEncode(e)
        let others = [
            #"{"kty":"EC","kid":"ec","crv":"P-256","x":"AA","y":"AA"}"#,
            #"{"kty":"RSA","alg":"RS512","kid":"rs512","n":"\#(modulus)","e":"\#(exponent)"}"#,
            #"{"kty":"RSA","use":"enc","kid":"enc","n":"\#(modulus)","e":"\#(exponent)"}"#,
            #"{"kty":"RSA","kid":"","n":"\#(modulus)","e":"\#(exponent)"}"#,
            #"{"kty":"RSA","kid":"short","n":"AQAB","e":"AQAB"}"#,
            #"{"kty":"RSA","kid":"not-base64","n":"***","e":"AQAB"}"#,
            #"{"kty":"RSA","kid":"no-e","n":"\#(modulus)"}"#,
            #""a string""#, "null", "[]",
        ]
        let mixed = good.replacingOccurrences(of: "[{", with: "[\(others.joined(separator: ",")),{")
        let set = try JSONWebKeySet(json: Array(mixed.utf8))
        #expect(set.keys.keys.sorted() == ["good"])
        // Without "alg" and "use" (both optional in RFC 7517) an RSA key is taken.
        let bare = #"{"keys":[{"kty":"RSA","kid":"bare","n":"\#(modulus)","e":"\#(exponent)"}]}"#
        #expect(try JSONWebKeySet(json: Array(bare.utf8)).keys.keys.sorted() == ["bare"])
    }

    @Test func refusesDocumentsWithoutAUsableKey() {
        for document in ["", "{", "[]", "{}", #"{"keys":{}}"#, #"{"keys":[]}"#,
                         #"{"keys":[{"kty":"EC","kid":"x"}]}"#, String(repeating: "[", count: 100)] {
            #expect(throws: GooglePlayError.self, "\(document)") { try JSONWebKeySet(json: Array(document.utf8)) }
        }
    }
}
