import StoreRelayConfig
import StoreRelayNet

/// What every new connection to the cluster server checks before it is used (at start, a
/// refusal stops the start; on a reconnect, the instance answers 503 until the server
/// passes): the durability settings, and, with `wait-replicas`, that the server has WAITAOF.
public struct ServerRequirements: Sendable, Hashable {
    public var durability: ServerDurability
    /// `wait-replicas`: > 0 needs WAITAOF (Redis 7.2 or newer, Valkey).
    public var waitReplicas: Int

    public init(durability: ServerDurability = ServerDurability(), waitReplicas: Int = 0) {
        self.durability = durability
        self.waitReplicas = waitReplicas
    }

    public init(_ cluster: ClusterConfiguration) {
        self.init(durability: ServerDurability(requireAOF: cluster.requireAOF, requireNoEviction: cluster.requireNoEviction),
                  waitReplicas: cluster.waitReplicas)
    }

    /// `WAITAOF 1 0 1` waits for nothing this new connection wrote, so it answers at once, or
    /// with the error a server gives when it has no WAITAOF, forbids it (ACL), or has no
    /// append-only file to wait for.
    static let waitAOFProbe = RESPCommand("WAITAOF", "1", "0", "1")

    /// The commands to run on every new connection (`RedisConfiguration.connectionChecks`).
    public var checks: [RESPCommand] {
        durability.checks + (waitReplicas > 0 ? [Self.waitAOFProbe] : [])
    }

    /// Whether there is anything to check.
    public var isEmpty: Bool { checks.isEmpty }

    /// nil when the replies to `checks` are acceptable; otherwise one sentence saying why not
    /// (`RedisConfiguration.acceptConnection`).
    public func refusal(_ replies: [RESPValue]) -> String? {
        let durabilityCount = durability.checks.count
        if let refusal = durability.refusal(replies.prefix(durabilityCount)) { return refusal }
        guard waitReplicas > 0 else { return nil }
        guard replies.count > durabilityCount else { return "the server did not answer WAITAOF" }
        return Self.waitAOFRefusal(replies[durabilityCount], waitReplicas: waitReplicas)
    }

    /// Why `wait-replicas` cannot work on a server that answered the probe `reply`, or nil.
    static func waitAOFRefusal(_ reply: RESPValue, waitReplicas: Int) -> String? {
        guard case .error(let message) = reply else { return nil }
        let detail = String(message.prefix(200))
        if message.lowercased().contains("unknown command") {
            return "wait-replicas \(waitReplicas) needs WAITAOF, which this server does not have (\(detail)): "
                + "use Redis 7.2 or newer, or Valkey, or set wait-replicas 0"
        }
        return "wait-replicas \(waitReplicas) needs WAITAOF, which this server refused (\(detail))"
    }
}
