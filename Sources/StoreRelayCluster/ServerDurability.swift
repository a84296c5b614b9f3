import StoreRelayNet

/// "Durability is checked, not assumed" (docs/SPEC.md "Cluster mode"): the server must answer
/// `CONFIG GET` with `appendonly yes` and `appendfsync always` (`require-aof`), and with
/// `maxmemory-policy noeviction` (`require-noeviction`), or it is refused with one sentence
/// naming the setting. Checked on every new connection and, by `ServerWatch`, every few
/// seconds while connected. A server that acknowledged a write and lost it in a crash, or
/// evicted it when memory ran short, would lose a notification Apple was told we had.
public struct ServerDurability: Sendable, Hashable {
    /// One setting checked, the value cluster mode needs, and the option that waives it.
    struct Setting: Sendable, Hashable {
        var name: String
        var wanted: String
        var option: String
        var risk: String
    }

    static let appendonly = Setting(name: "appendonly", wanted: "yes", option: "require-aof",
                                    risk: "an acknowledged notification could be lost in a crash")
    static let appendfsync = Setting(name: "appendfsync", wanted: "always", option: "require-aof",
                                     risk: "an acknowledged notification could be lost in a crash")
    // allkeys-* evicts events, dead letters and streams; volatile-* the dedupe markers, which
    // have a TTL, so Apple's retry of an acknowledged notification would be delivered again.
    static let maxmemoryPolicy = Setting(name: "maxmemory-policy", wanted: "noeviction", option: "require-noeviction",
                                         risk: "the server may evict acknowledged events, dead letters and dedupe markers when memory runs short")

    /// `require-aof`: `appendonly yes` and `appendfsync always`.
    public var requireAOF: Bool
    /// `require-noeviction`: `maxmemory-policy noeviction`.
    public var requireNoEviction: Bool

    public init(requireAOF: Bool = true, requireNoEviction: Bool = true) {
        self.requireAOF = requireAOF
        self.requireNoEviction = requireNoEviction
    }

    /// Every setting cluster mode cares about, checked or not: what `/api/status` shows.
    public static let settingNames = [appendonly.name, appendfsync.name, maxmemoryPolicy.name]

    var settings: [Setting] {
        (requireAOF ? [Self.appendonly, Self.appendfsync] : []) + (requireNoEviction ? [Self.maxmemoryPolicy] : [])
    }

    /// Whether anything is checked at all.
    public var isChecked: Bool { !settings.isEmpty }

    /// One `CONFIG GET` per setting required (`RedisConfiguration.connectionChecks`).
    public var checks: [RESPCommand] { settings.map { RESPCommand("CONFIG", "GET", $0.name) } }

    /// nil when `replies` (to `checks`, in order) show a durable server; otherwise why not,
    /// as one sentence naming the setting (`RedisConfiguration.acceptConnection`).
    public func refusal(_ replies: some Collection<RESPValue>) -> String? {
        let settings = settings
        guard replies.count >= settings.count else {
            return "the server did not answer CONFIG GET " + settings.map(\.name).joined(separator: " ")
        }
        for (reply, setting) in zip(replies, settings) {
            if let error = reply.errorKind {
                let detail = reply.description.dropFirst().prefix(200)
                return "the server refused CONFIG GET \(setting.name) (\(detail.isEmpty ? String(error) : String(detail))); "
                    + "allow it, or set `\(setting.option) no` if the server is known to be safe without the check"
            }
            let value = Self.value(reply)
            guard let value, value.lowercased() == setting.wanted else {
                return "the server runs with \(setting.name) \(value ?? "unset"), but cluster mode needs "
                    + "\(setting.name) \(setting.wanted) (or `\(setting.option) no`): \(setting.risk)"
            }
        }
        return nil
    }

    /// The value in a `CONFIG GET` reply: RESP2 answers [name, value]; an unknown setting [].
    public static func value(_ reply: RESPValue) -> String? {
        reply.elements.flatMap { $0.count == 2 ? $0[1].string : nil }
    }
}
