public import StoreRelayNet

/// The `cluster URL { ... }` block (docs/SPEC.md "Cluster mode"): every instance shares one
/// Redis or Valkey server for dedupe, delivery queues, dead letters and recent events,
/// instead of keeping its own journal.
public struct ClusterConfiguration: Sendable, Hashable {
    public static let defaultClaimAfter: Duration = .seconds(60)
    public static let defaultWaitTimeout: Duration = .seconds(1)
    /// The server's dedupe window when neither the block nor the top level names one (SPEC).
    public static let defaultDedupeWindow: Duration = .seconds(14 * 86_400)

    /// The server, with the block's `user` and `password` in place of the URL's when given.
    public var url: RedisURL
    /// `ca-file`: a CA that also vouches for a `rediss://` server.
    public var caFile: String?
    /// `client-cert CERT KEY`: the certificate a `rediss://` server that authenticates its
    /// clients (mutual TLS) is shown.
    public var clientCertificate: TLSFiles?
    /// `instance-id`: this instance's consumer name, heartbeat and file-queue subdirectory;
    /// nil: `hostname-pid`, chosen at start.
    public var instanceId: String?
    /// `dedupe-window`: how long an id is remembered on the server.
    public var dedupeWindow: Duration
    /// `claim-after`: how long a delivery may sit idle on a (dead) instance before another
    /// takes it over.
    public var claimAfter: Duration
    /// `wait-replicas`: > 0 waits for `WAITAOF 1 N` before answering 200.
    public var waitReplicas: Int
    public var waitTimeout: Duration
    /// `require-aof`: refuse a server that is not `appendonly yes` + `appendfsync always`.
    public var requireAOF: Bool
    /// How the server is found: the URL's host, or (`redis-cluster://`, `sentinel://`) the
    /// primary a Redis Cluster or Sentinel names; `url` then holds the credentials, TLS and
    /// database, its host the first node's.
    public var topology: RedisTopology = .standalone
    /// `require-noeviction`: refuse a server whose `maxmemory-policy` is not `noeviction`
    /// (any other policy may drop acknowledged events, dead letters or dedupe markers).
    public var requireNoEviction: Bool
    /// `cluster-key KEY [OTHER-KEY] [unsealed]`: the keys records on the server are sealed
    /// with (the first) and checked against (any: the other is the key being rotated in or
    /// out); empty: records are neither sealed nor checked, and the start warns.
    public var clusterKeys: [ConfigSecret] = []
    /// `unsealed` after the keys: records without a seal (written before the key was set)
    /// are still acted on, while the key is being turned on.
    public var acceptsUnsealed = false
    /// The shortest `cluster-key`: 32 characters, as much as HMAC-SHA256 can use.
    public static let minimumKeyLength = 32

    public init(url: RedisURL, caFile: String? = nil, instanceId: String? = nil, dedupeWindow: Duration = defaultDedupeWindow,
                claimAfter: Duration = defaultClaimAfter, waitReplicas: Int = 0, waitTimeout: Duration = defaultWaitTimeout,
                requireAOF: Bool = true, requireNoEviction: Bool = true) {
        self.url = url
        self.caFile = caFile
        self.instanceId = instanceId
        self.dedupeWindow = dedupeWindow
        self.claimAfter = claimAfter
        self.waitReplicas = waitReplicas
        self.waitTimeout = waitTimeout
        self.requireAOF = requireAOF
        self.requireNoEviction = requireNoEviction
    }
}
