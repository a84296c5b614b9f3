import StoreRelayCore

/// A V1 body as it may leave the gateway: without the app's shared secret.
public enum V1Body {
    /// `body` without any `password` member at any depth: byte for byte when it carries none,
    /// else re-serialized (member order and number text are kept by the JSON parser). A body
    /// that is not JSON never became an event: it yields nothing rather than risk the secret.
    public static func redacted(_ body: [UInt8]) -> [UInt8] {
        // Cheap pre-check: a body that never spells the word, even with JSON escapes
        // (`"pass\u0077ord"` is the same member name), cannot hold the member.
        let text = String(decoding: body, as: UTF8.self)
        guard text.contains("password") || body.contains(UInt8(ascii: "\\")) else { return body }
        guard let value = try? JSONValue.parse(body) else { return [] }
        let cleaned = withoutPasswords(value)
        return cleaned == value ? body : cleaned.serializedBytes()
    }

    /// `value` without any `password` member at any depth: what of a V1 body may be copied
    /// into an event (its `extra`) as well as what may be forwarded whole.
    static func withoutPasswords(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let object):
            return .object(JSONObject(object.members.filter { $0.key != "password" }
                .map { (key: $0.key, value: withoutPasswords($0.value)) }))
        case .array(let elements):
            return .array(elements.map(withoutPasswords))
        default:
            return value
        }
    }
}
