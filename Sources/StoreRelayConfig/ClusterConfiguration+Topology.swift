public import StoreRelayNet

extension ClusterConfiguration {
    /// The server as configured, credentials hidden, in the URL's own form (`redis://`,
    /// `redis-cluster://`, `sentinel://`): for logs, `/api/status` and `storerelay check`.
    public var server: String { topology.describe(url) }

    /// `storerelay check`'s line on how the server is found; nil for one server.
    public var topologyReport: String? {
        topology == .standalone ? nil : "  topology: " + topology.summary
    }
}
