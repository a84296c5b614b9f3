import StoreRelayCore

/// How the client finds its server and keeps following it (docs/SPEC.md "Cluster mode",
/// Topologies): each connection goes where the locator says; a primary found through a
/// topology must answer `ROLE` as `master` before anything is sent on it; with Sentinel, the
/// sentinels are asked again every `sentinelCheckInterval`, and a primary they no longer
/// name is left, even one that still answers.
extension RedisClient {
    /// The server as configured, credentials hidden: the URL, or the topology's URL.
    public var server: String { configuration.topology.describe(configuration.url) }

    /// The node the connection of the moment goes to (nil while not connected).
    public var connectedNode: HostPort? {
        state.withLock { state in state.isReady ? state.node ?? configuration.url.node : nil }
    }

    /// `redis.node` for log lines, when a topology named the node.
    var nodeMetadata: Logger.Metadata {
        state.withLock { $0.node }.map { [("redis.node", $0.description)] } ?? []
    }

    /// The locator answered: connect there, or count a failure (backoff, observers) as a
    /// failed connection would.
    func located(_ result: Result<HostPort?, RedisError>) {
        switch result {
        case .success(let node):
            let connection = state.withLock { state -> RedisConnection? in
                state.isLocating = false
                guard !state.isShutDown, state.connection == nil else { return nil }
                let connection = makeConnection(to: node)
                state.connection = connection
                state.node = node
                return connection
            }
            connection?.open()
        case .failure(let error):
            state.withLock { $0.isLocating = false }
            connectionClosed(nil, error)
        }
    }

    /// Greeted: a node a topology named is used only once it answers `ROLE` as a primary (a
    /// sentinel's stale answer, a cluster node demoted since the slot map was read).
    func connectionOpened(_ connection: RedisConnection?) {
        guard configuration.topology != .standalone, let connection else { return connectionReady(connection) }
        connection.send(RESPCommand("ROLE")) { [weak self] result in
            guard let self else { return }
            let role: String
            switch result {
            case .failure:
                return  // the connection is gone and says why
            case .success(let reply) where reply.errorKind != nil:
                // An ACL without @admin, or a service that renamed ROLE: the node cannot be
                // checked here; READONLY replies and the sentinels' re-check still are.
                configuration.logger.warning("redis ROLE refused; the primary is not checked at connect",
                                             [("redis.url", server), ("reply", String(reply.description.prefix(200)))] + nodeMetadata)
                role = "master"
            case .success(let reply):
                do throws(TopologyReplyError) {
                    role = try SentinelReplies.role(reply)
                } catch {
                    return connection.drop(RedisError(.unavailable, "\(connection.origin) did not say it is a primary: \(error)"))
                }
            }
            guard role == "master" else {
                return connection.drop(RedisError(.unavailable, "\(connection.origin) is a \(role == "slave" ? "replica" : role), "
                    + "not the primary; asking the \(configuration.topology.nodesName) again"))
            }
            retireRedirect(at: state.withLock { $0.connection === connection ? $0.node : nil })
            connectionReady(connection)
        }
    }

    /// Closes `connection` with `error` if it is still the client's: the client reconnects
    /// to wherever the topology says now. (A reply that arrives late on a connection already
    /// replaced must not drop its successor.)
    /// Returns whether this call closes it (false: not the client's, or already closing).
    @discardableResult
    func drop(_ connection: RedisConnection, _ error: RedisError) -> Bool {
        let closes = state.withLock { state -> Bool in
            guard state.connection === connection, state.dropping != ObjectIdentifier(connection) else { return false }
            state.dropping = ObjectIdentifier(connection)
            return true
        }
        if closes { connection.drop(error) }
        return closes
    }

    /// With Sentinel, starts asking the sentinels every `sentinelCheckInterval` (once).
    func startSentinelWatch() {
        guard case .sentinel(let sentinels, let name) = configuration.topology else { return }
        let watch = state.withLock { state -> SentinelWatch? in
            guard state.sentinelWatch == nil, !state.isShutDown else { return nil }
            let watch = SentinelWatch(configuration: configuration, sentinels: sentinels, name: name)
            state.sentinelWatch = watch
            return watch
        }
        watch?.start { [weak self] verdict in self?.sentinelsAnswered(verdict, name: name) }
    }

    /// The sentinels' verdict of a round: a connected primary they no longer name is left.
    private func sentinelsAnswered(_ verdict: SentinelTally.Verdict, name: String) {
        let current = state.withLock { state -> (RedisConnection, HostPort)? in
            guard state.isReady, let connection = state.connection, let node = state.node else { return nil }
            return (connection, node)
        }
        guard let (connection, node) = current else { return }
        let reason: String
        switch verdict {
        case .noAnswer:
            return
        case .primary(let named) where named == node:
            return
        case .primary(let named):
            reason = "the sentinels now name \(named) as the primary '\(name)', not \(node); following them"
        case .unknown:
            reason = "the sentinels no longer monitor a primary named '\(name)'; \(node) is not used any more"
        }
        configuration.logger.warning("redis primary changed", [("redis.url", server), ("redis.node", node.description), ("reason", reason)])
        drop(connection, RedisError(.unavailable, reason))
    }
}

extension RedisTopology {
    /// Who is asked again when a node is not what they said.
    var nodesName: String {
        switch self {
        case .standalone: "server"
        case .cluster: "cluster"
        case .sentinel: "sentinels"
        }
    }
}
