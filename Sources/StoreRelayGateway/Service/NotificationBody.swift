import StoreRelayCore

/// The two shapes Apple posts, told apart by their content rather than by configuration.
enum NotificationBody {
    /// V2: `{"signedPayload":"<JWS>"}`.
    case v2(signedPayload: String)
    /// V1: the legacy unsigned JSON with `notification_type` and `password`.
    case v1(JSONValue)

    /// Classifies `bytes`, or explains in one sentence why it is no notification at all.
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
}
