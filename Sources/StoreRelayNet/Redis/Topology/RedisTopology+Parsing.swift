extension RedisTopology {
    /// The `cluster` line's URL in any of its forms:
    /// - `redis://` or `rediss://[user:password@]host:port[/db]`: one server (`RedisURL`);
    /// - `redis-cluster://` or `rediss-cluster://[user:password@]h1:p1,h2:p2`: cluster seeds
    ///   (port 6379 when omitted; no database: a cluster has only 0);
    /// - `sentinel://` (or `redis-sentinel://`), `rediss-sentinel://[user:password@]s1:p1,s2:p2/NAME[/db]`:
    ///   sentinels (port 26379 when omitted) and the name they monitor the primary by. The
    ///   credentials are the primary's; sentinels are asked without them.
    ///
    /// The returned URL carries TLS, credentials and database, its host the first node's.
    /// No error quotes the credentials.
    public static func parse(_ text: String) throws(AddressError) -> (url: RedisURL, topology: RedisTopology) {
        let lower = text.lowercased()
        guard let scheme = Scheme.allCases.first(where: { lower.hasPrefix($0.rawValue + "://") }) else {
            return (try RedisURL.parse(text), .standalone)
        }
        var rest = Substring(text.dropFirst(scheme.rawValue.count + 3))
        var credentials: Substring = ""
        if let at = rest.lastIndex(of: "@") {
            credentials = rest[...at]
            rest = rest[rest.index(after: at)...]
        }
        var path: Substring = ""
        if let slash = rest.firstIndex(of: "/") {
            path = rest[rest.index(after: slash)...]
            rest = rest[..<slash]
        }
        let nodes = try Self.nodes(rest, defaultPort: scheme.isSentinel ? defaultSentinelPort : RedisURL.defaultPort, scheme)
        var database: Substring = ""
        let topology: RedisTopology
        if scheme.isSentinel {
            let parts = path.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
            let name = parts.first ?? ""
            guard isPrimaryName(name) else {
                throw AddressError("'\(name.prefix(40))' is not a primary's name (expected \(scheme.rawValue)://s1:26379,s2:26379/NAME[/db], "
                    + "NAME being up to 128 letters, digits, '-', '_' and '.')")
            }
            database = parts.count > 1 ? parts[1] : ""
            topology = .sentinel(sentinels: nodes, primaryName: String(name))
        } else {
            guard path.isEmpty || path == "0" else {
                throw AddressError("a Redis Cluster has only database 0 ('/\(path.prefix(20))' in a \(scheme.rawValue):// URL)")
            }
            topology = .cluster(seeds: nodes)
        }
        // RedisURL reads (and percent-decodes) the credentials and the database as it does
        // for one server: the first node stands in for the host until the topology names one.
        let tls = scheme == .tlsCluster || scheme == .tlsSentinel
        let url = try RedisURL.parse("\(tls ? "rediss" : "redis")://\(credentials)\(nodes[0])/\(database)")
        return (url, topology)
    }

    private enum Scheme: String, CaseIterable {
        case cluster = "redis-cluster", tlsCluster = "rediss-cluster"
        case sentinel = "sentinel", redisSentinel = "redis-sentinel", tlsSentinel = "rediss-sentinel"

        var isSentinel: Bool { self == .sentinel || self == .redisSentinel || self == .tlsSentinel }
    }

    /// `h1:p1,h2,[::1]:p3`: one to `maximumNodes` addresses, a port added where missing.
    private static func nodes(_ text: Substring, defaultPort: UInt16, _ scheme: Scheme) throws(AddressError) -> [HostPort] {
        let what = scheme.isSentinel ? "sentinel" : "seed"
        let items = text.split(separator: ",", omittingEmptySubsequences: false)
        guard !text.isEmpty, items.count <= maximumNodes else {
            throw AddressError("a \(scheme.rawValue):// URL names 1 to \(maximumNodes) \(what)s as host:port,host:port")
        }
        var nodes: [HostPort] = []
        for item in items {
            let hasPort = item.hasPrefix("[") ? item.contains("]:") : item.contains(":")
            let node = try HostPort.parse(hasPort ? String(item) : "\(item):\(defaultPort)")
            guard node.port > 0 else { throw AddressError("port 0 is not a \(what)'s port ('\(item.prefix(80))')") }
            nodes.append(node)
        }
        return nodes
    }

    /// What Sentinel names a primary in practice; `/`, `@`, `,` and spaces never.
    private static func isPrimaryName(_ name: Substring) -> Bool {
        (1...128).contains(name.utf8.count) && name.utf8.allSatisfy { byte in
            (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "z")) || (byte >= 48 && byte <= 57)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: ".")
        }
    }
}
