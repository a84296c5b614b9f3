import StoreRelayVerification
import StoreRelayCore

/// Signs payloads as App Store JWS (RFC 7515 compact form): header
/// `{"alg":"ES256","x5c":[leaf, intermediate, root]}`, ES256 over `header.payload`, the
/// signature as raw `R‖S` (RFC 7518 §3.4), every segment base64url without padding.
struct JWSSigner {
    let authority: DevCertificateAuthority

    func sign(_ payload: JSONValue) throws(SimulatorError) -> String {
        let header = JSONValue.object(JSONObject([
            (key: "alg", value: "ES256"),
            (key: "x5c", value: .array(authority.x5c.map { .string($0) })),
        ]))
        let signingInput = Base64.urlEncode(header.serializedBytes()) + "." + Base64.urlEncode(payload.serializedBytes())
        let signature: [UInt8]
        do {
            signature = try authority.leafKey.signES256(Array(signingInput.utf8))
        } catch {
            throw SimulatorError(.signing, "cannot sign the notification: \(error.reason)")
        }
        return signingInput + "." + Base64.urlEncode(signature)
    }
}
