/// How the client finds the server to send to (docs/SPEC.md "Cluster mode", Topologies):
/// the URL's host itself, the primary that a Redis Cluster's slot map names for the client's
/// slot, or the primary that Sentinel names. The URL keeps what every connection shares:
/// TLS, credentials and the database.
public enum RedisTopology: Sendable, Hashable {
    /// One server: the URL's host and port.
    case standalone
    /// A Redis Cluster or Valkey cluster: any seed is asked for the slot map, and the client
    /// connects to the primary serving `RedisConfiguration.slotKey`'s slot.
    case cluster(seeds: [HostPort])
    /// Sentinels watching the primary they know as `primaryName`.
    case sentinel(sentinels: [HostPort], primaryName: String)

    public var isCluster: Bool {
        if case .cluster = self { true } else { false }
    }

    public static let defaultSentinelPort: UInt16 = 26_379
    /// The most seeds or sentinels one URL may name.
    public static let maximumNodes = 16

    /// `url` with this topology, as the configuration wrote it, credentials hidden:
    /// `redis-cluster://h1:7000,h2:7000`, `sentinel://:***@s1:26379,s2:26379/mymaster`.
    public func describe(_ url: RedisURL) -> String {
        let credentials = url.user.map { "\($0):***@" } ?? (url.password == nil ? "" : ":***@")
        switch self {
        case .standalone:
            return url.description
        case .cluster(let seeds):
            return "\(url.usesTLS ? "rediss" : "redis")-cluster://\(credentials)" + seeds.map(\.description).joined(separator: ",")
        case .sentinel(let sentinels, let name):
            let database = url.database == 0 ? "" : "/\(url.database)"
            return "\(url.usesTLS ? "rediss-sentinel" : "sentinel")://\(credentials)" + sentinels.map(\.description).joined(separator: ",")
                + "/\(name)\(database)"
        }
    }

    /// What `storerelay check` and the start log say the topology does, in one line.
    public var summary: String {
        switch self {
        case .standalone:
            return "one server"
        case .cluster(let seeds):
            return "Redis Cluster: slots asked of \(seeds.count == 1 ? "seed" : "seeds") \(seeds.map(\.description).joined(separator: ", ")); "
                + "connects to the primary of the keys' slot, follows MOVED and ASK"
        case .sentinel(let sentinels, let name):
            return "Sentinel: the primary '\(name)' as sentinels \(sentinels.map(\.description).joined(separator: ", ")) name it; "
                + "ROLE checked on connect, sentinels asked again every second"
        }
    }
}
