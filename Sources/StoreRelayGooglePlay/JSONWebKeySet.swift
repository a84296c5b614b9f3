import StoreRelayCore
import StoreRelayCrypto

/// The RS256 keys of a JSON Web Key Set (RFC 7517), by key id: what Google publishes at
/// `https://www.googleapis.com/oauth2/v3/certs` for the tokens on Pub/Sub pushes.
///
/// A key the set holds that is not an RSA signing key for RS256 is skipped, not an error:
/// Google may publish other kinds beside them, and a push token names its key by `kid`. A
/// set with no usable key at all is an error, so a broken fetch never replaces good keys.
public struct JSONWebKeySet: Sendable {
    public let keys: [String: RSAPublicKey]

    public init(keys: [String: RSAPublicKey]) { self.keys = keys }

    /// Parses a key set document. Throws with a sentence when it is not one.
    public init(json bytes: [UInt8]) throws(GooglePlayError) {
        let document: JSONValue
        do {
            document = try JSONValue.parse(bytes, maxDepth: 8)
        } catch {
            throw GooglePlayError("The key set is not JSON: \(error)")
        }
        guard let members = document["keys"]?.arrayValue else {
            throw GooglePlayError("The key set has no \"keys\" array.")
        }
        var keys: [String: RSAPublicKey] = [:]
        for member in members {
            guard member["kty"]?.stringValue == "RSA",
                  member["alg"].map({ $0.stringValue == "RS256" }) ?? true,
                  member["use"].map({ $0.stringValue == "sig" }) ?? true,
                  let kid = member["kid"]?.stringValue, !kid.isEmpty,
                  let modulus = member["n"]?.stringValue.flatMap({ Base64.urlDecode($0) }),
                  let exponent = member["e"]?.stringValue.flatMap({ Base64.urlDecode($0) }),
                  let key = try? RSAPublicKey(modulus: modulus, exponent: exponent)
            else { continue }
            keys[kid] = key
        }
        guard !keys.isEmpty else { throw GooglePlayError("The key set holds no RS256 signing key.") }
        self.keys = keys
    }

    /// The document for `keys`, as Google writes it (for the simulator and the tests).
    public static func document(_ keys: [(kid: String, key: RSAPublicKey)]) throws(CryptoError) -> String {
        var entries: [String] = []
        for (kid, key) in keys {
            let (modulus, exponent) = try key.components()
            entries.append("{\"kty\":\"RSA\",\"alg\":\"RS256\",\"use\":\"sig\",\"kid\":\(JSONStringEscaping.quoted(kid)),"
                + "\"n\":\"\(Base64.urlEncode(modulus))\",\"e\":\"\(Base64.urlEncode(exponent))\"}")
        }
        return "{\"keys\":[\(entries.joined(separator: ","))]}"
    }
}
