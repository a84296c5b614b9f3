public import StoreRelayNet

extension ClusterConfiguration {
    /// The server as configured, credentials hidden, in the URL's own form (`redis://`,
    /// `redis-cluster://`, `sentinel://`): for logs, `/api/status` and `storerelay check`.
    public var server: String { topology.describe(url) }

    /// `storerelay check`'s line on how the server is found; nil for one server.
    public var topologyReport: String? {
        topology == .standalone ? nil : "  topology: " + topology.summary
    }

    /// The hosts the URL names: the server, the seeds or the sentinels. What a topology finds
    /// at run time is taken to be where these are (for the plaintext-password warning).
    public var namedHosts: [HostPort] {
        switch topology {
        case .standalone: [HostPort(host: url.host, port: url.port, kind: url.hostKind)]
        case .cluster(let seeds): seeds
        case .sentinel(let sentinels, _): sentinels
        }
    }
}
