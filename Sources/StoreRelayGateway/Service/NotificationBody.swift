import StoreRelayVerification
import StoreRelayCore

/// The two shapes Apple posts, told apart by their content rather than by configuration.
enum NotificationBody {
    /// V2: `{"signedPayload":"<JWS>"}`.
    case v2(signedPayload: String)
    /// V1: the legacy unsigned JSON with `notification_type` and `password`.
    case v1(JSONValue)

    /// Classifies `bytes`, or explains in one sentence why it is no notification at all.
    /// JSON with a duplicate member name anywhere is no notification: the parser refuses it.
    static func classify(_ bytes: [UInt8]) throws(IntakeRejection) -> NotificationBody {
        guard !bytes.isEmpty else { throw .malformed("The body is empty; expected Apple's notification JSON.") }
        let json: JSONValue
        do {
            json = try JSONValue.parse(bytes)
        } catch {
            throw .malformed("The body is not valid JSON (\(error.reason) at byte \(error.offset)).")
        }
        guard json.objectValue != nil else {
            throw .malformed("The body is not a JSON object; expected Apple's notification JSON.")
        }
        if let signed = json["signedPayload"] {
            guard let payload = signed.stringValue, !payload.isEmpty else {
                throw .malformed("signedPayload must be a non-empty string.")
            }
            return .v2(signedPayload: payload)
        }
        if json["notification_type"]?.stringValue != nil {
            return .v1(json)
        }
        throw .malformed("The body has neither signedPayload (V2) nor notification_type (V1).")
    }

    /// What the gateway stores and forwards (`format apple`, `raw`, a dead letter's
    /// `appleBody`) in place of the received bytes. V2: only the JWS that was verified, as
    /// `{"signedPayload":"…"}`; anything else the sender put beside it is dropped. V1: the
    /// body without its shared secret.
    static func forwardable(_ body: NotificationBody, received bytes: [UInt8]) -> [UInt8] {
        switch body {
        case .v2(let signedPayload):
            canonical(signedPayload: signedPayload)
        case .v1:
            V1Body.redacted(bytes)
        }
    }

    /// `{"signedPayload":"<JWS>"}`, byte for byte what serializing that one-member object
    /// gives, written into one buffer of the right size instead of through a JSON tree.
    static func canonical(signedPayload: String) -> [UInt8] {
        var jws = signedPayload
        return jws.withUTF8 { bytes in
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 24)
            out.append(contentsOf: #"{"signedPayload":"#.utf8)
            JSONValue.serializeString(utf8: bytes, into: &out)
            out.append(UInt8(ascii: "}"))
            return out
        }
    }
}
