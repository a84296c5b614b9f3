import StoreRelayCore
import StoreRelayCrypto

/// A legacy App Store Server Notification (V1): an unsigned JSON object with
/// `notification_type` and the app's shared secret in `password`.
///
/// Parsing only checks the shape; the gateway authenticates the body by comparing
/// `password` with a configured shared secret, then calls `normalized(receivedAt:)`.
/// Apple documents the V1 body as `responseBodyV1`; see `../shared/vectors/v1/`.
public struct V1Notification: Sendable, Hashable {
    /// `notification_type` as Apple sent it, e.g. `DID_RECOVER`.
    public let notificationType: String
    /// The shared secret Apple echoes back. Never copied into an event.
    public let password: String?
    /// `environment` (`PROD` or `Sandbox`), else `unified_receipt.environment`.
    public let environment: AppStoreEnvironment
    /// `bid`.
    public let bundleId: String?
    /// `bvrs`.
    public let bundleVersion: String?
    /// The event id: a stable hash of the exact body bytes, shaped like a UUID.
    public let eventID: String
    /// The whole body, `password` included; internal so it cannot leak by accident.
    let body: JSONObject

    /// Parses a V1 body.
    /// - Throws: `EventError`: `.malformedJSON`, `.notAnObject`, `.missingField` (no string
    ///   `notification_type`) or `.unknownEnvironment`.
    public static func parse(_ bytes: [UInt8]) throws(EventError) -> V1Notification {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes)
        } catch {
            throw .malformed(error)
        }
        guard case .object(let body) = value else {
            throw EventError(.notAnObject, "a V1 notification must be a JSON object")
        }
        guard let type = body["notification_type"]?.stringValue, !type.isEmpty else {
            throw .missing("notification_type", "a non-empty string")
        }
        let name = body["environment"]?.stringValue ?? body["unified_receipt"]?["environment"]?.stringValue
        guard let name else { throw .missing("environment", "a string") }
        guard let environment = AppStoreEnvironment(appleName: name) else {
            throw EventError(.unknownEnvironment, "`environment` \"\(name)\" is not an App Store environment")
        }
        return V1Notification(
            notificationType: type,
            password: body["password"]?.stringValue,
            environment: environment,
            bundleId: body["bid"]?.stringValue,
            bundleVersion: body["bvrs"]?.stringValue,
            eventID: eventID(ofBody: bytes),
            body: body
        )
    }

    /// SHA-256 of the exact body bytes, its first 16 bytes written as a lowercase UUID
    /// (8-4-4-4-12). V1 has no notification id; hashing the bytes makes Apple's retries of
    /// one notification collapse onto one event, and the UUID shape keeps downstream
    /// schemas that expect V2's `notificationUUID` working. The version and variant bits
    /// are left as the hash made them.
    public static func eventID(ofBody bytes: [UInt8]) -> String {
        let hex = Array(SHA256.hex(Array(SHA256.hash(bytes).prefix(16))))
        var out = ""
        for (index, character) in hex.enumerated() {
            if [8, 12, 16, 20].contains(index) { out.append("-") }
            out.append(character)
        }
        return out
    }
}
