import StoreRelayCore

extension NATSConfiguration {
    /// `CONNECT {...}` (NATS "Client Protocol", CONNECT), without its CRLF: not verbose (no
    /// `+OK` per operation), headers on (for `Nats-Msg-Id`), no-responders on (so a subject
    /// without a stream answers 503 at once instead of timing out), and the credentials, user
    /// and password or a token. The values are JSON-escaped, so any password can be sent.
    func connectCommand(tls: Bool) -> [UInt8] {
        var fields: [(key: String, value: JSONValue)] = [
            ("verbose", false), ("pedantic", false), ("tls_required", .bool(tls)), ("name", .string(clientName)),
            ("lang", "swift"), ("version", "1"), ("protocol", 1), ("headers", true), ("no_responders", true),
        ]
        if let user, let password {
            fields += [("user", .string(user)), ("pass", .string(password))]
        } else if let token {
            fields.append(("auth_token", .string(token)))
        }
        var bytes = Array("CONNECT ".utf8)
        JSONValue.object(JSONObject(fields)).serialize(into: &bytes)
        return bytes
    }
}
