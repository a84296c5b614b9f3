import StoreRelayNet

/// "Durability is checked, not assumed" (docs/SPEC.md "Cluster mode"): at start and on every
/// reconnect, the server must answer `CONFIG GET appendonly appendfsync` with `yes` and
/// `always`, or the connection is refused with one sentence naming the setting. A server that
/// acknowledged a write and lost it in a crash would lose a notification Apple was told we had.
public enum ServerDurability {
    /// The commands run on every new connection (`RedisConfiguration.connectionChecks`).
    public static let checks = [RESPCommand("CONFIG", "GET", "appendonly"), RESPCommand("CONFIG", "GET", "appendfsync")]

    /// nil when the replies show a durable server; otherwise why not, as one sentence
    /// (`RedisConfiguration.acceptConnection`).
    public static func refusal(_ replies: [RESPValue]) -> String? {
        for (reply, (name, wanted)) in zip(replies, [("appendonly", "yes"), ("appendfsync", "always")]) {
            if let error = reply.errorKind {
                return "the server refused CONFIG GET \(name) (\(error)); allow it, or set `require-aof no` if the server is known to be durable"
            }
            // RESP2 answers [name, value]; an unknown setting answers [].
            let value = reply.elements.flatMap { $0.count == 2 ? $0[1].string : nil }
            guard let value, value.lowercased() == wanted else {
                return "the server runs with \(name) \(value ?? "unset"), but cluster mode needs \(name) \(wanted): "
                    + "an acknowledged notification could be lost in a crash"
            }
        }
        return replies.count >= 2 ? nil : "the server did not answer CONFIG GET appendonly appendfsync"
    }
}
