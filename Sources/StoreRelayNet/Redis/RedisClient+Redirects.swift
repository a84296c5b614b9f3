import StoreRelayCore

/// Redis Cluster's redirections and a demoted primary's refusals (docs/SPEC.md "Cluster
/// mode", Topologies). <https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#redirection-and-resharding>
///
/// - `MOVED slot node`: the slot lives there now. The client remembers the node, drops its
///   connection (it reconnects where a fresh slot map says, so the durability checks and the
///   epoch check run on the new node) and sends the command there once.
/// - `ASK slot node`: the slot is migrating and this key is there already (or is new). The
///   command goes there once, after `ASKING`; the connection stays.
/// - `READONLY`: the node became a replica (a failover). The client drops the connection and
///   asks the topology again; the caller gets the refusal (its command did not run).
///
/// A redirected command runs on a connection to the target (`RedirectConnection`); its reply
/// is final, even another redirection. A script (`EVALSHA`) is redirected as `EVAL` with its
/// source: the target may never have loaded it. Commands on a `RedisSession` are not
/// redirected (what they wait for, WAITAOF, is the session connection's writes): the caller
/// gets the redirection as the error reply it is, and the client still follows a MOVED.
extension RedisClient {
    typealias Completion = @Sendable (Result<RESPValue, RedisError>) -> Void
    typealias Completions = @Sendable ([Result<RESPValue, RedisError>]) -> Void

    /// `completion`, behind the handling of redirections (nothing to handle for one server).
    func following(_ command: RESPCommand, as redirected: RESPCommand?, from connection: RedisConnection,
                   _ completion: @escaping Completion) -> Completion {
        guard configuration.topology != .standalone else { return completion }
        return { [weak self] result in
            guard let self, case .success(let reply) = result, let redirect = notice(reply, on: connection) else {
                return completion(result)
            }
            resend(redirected ?? command, per: redirect) { completion($0[0]) }
        }
    }

    /// A pipeline's `completion`, behind the handling of each command's redirection.
    func following(_ commands: [RESPCommand], as redirected: [RESPCommand?], from connection: RedisConnection,
                   _ completion: @escaping Completions) -> Completions {
        guard configuration.topology != .standalone else { return completion }
        return { [weak self] results in
            guard let self else { return completion(results) }
            var redirects: [(index: Int, redirect: RedisRedirect)] = []
            for (index, result) in results.enumerated() {
                if case .success(let reply) = result, let redirect = notice(reply, on: connection) { redirects.append((index, redirect)) }
            }
            guard !redirects.isEmpty else { return completion(results) }
            let collected = Locked((results: results, pending: redirects.count))
            // In pipeline order: redirected together, they reach the target in that order.
            for (index, redirect) in redirects {
                let command = index < redirected.count ? redirected[index] ?? commands[index] : commands[index]
                resend(command, per: redirect) { replies in
                    let done = collected.withLock { collected -> [Result<RESPValue, RedisError>]? in
                        collected.results[index] = replies[0]
                        collected.pending -= 1
                        return collected.pending == 0 ? collected.results : nil
                    }
                    if let done { completion(done) }
                }
            }
        }
    }

    /// Acts on a reply from `connection`: a MOVED or ASK to follow is returned; a MOVED
    /// also moves the client, and a READONLY sends it back to the topology. Sessions call this
    /// too, and report the reply as it is.
    func notice(_ reply: RESPValue, on connection: RedisConnection) -> RedisRedirect? {
        switch reply.errorKind {
        case "MOVED", "ASK":
            guard case .cluster = configuration.topology, let redirect = RedisRedirect.parse(reply) else { return nil }
            if redirect.kind == .moved {
                let target = redirect.target(sentTo: sender)
                locator.moved(to: target)
                if drop(connection, RedisError(.unavailable, "slot \(redirect.slot) moved to \(target); reconnecting there")) {
                    configuration.logger.notice("redis cluster slot moved; following it",
                                                [("redis.url", server), ("slot", redirect.slot), ("redis.node", target.description)])
                }
            }
            return redirect
        case "READONLY" where configuration.topology != .standalone:
            if drop(connection, RedisError(.unavailable, "\(connection.origin) answered READONLY: it is a replica now; "
                + "asking the \(configuration.topology.nodesName) again")) {
                configuration.logger.warning("redis primary became a replica; following the topology", [("redis.url", server)] + nodeMetadata)
            }
            return nil
        default:
            return nil
        }
    }

    /// Where the connection of the moment goes: a redirection that names no host means its.
    private var sender: HostPort { state.withLock { $0.node } ?? configuration.url.node }

    /// Sends `command` once to the node `redirect` names, after `ASKING` for an ASK.
    private func resend(_ command: RESPCommand, per redirect: RedisRedirect, completion: @escaping Completions) {
        let target = redirect.target(sentTo: sender)
        let (connection, replaced) = state.withLock { state -> (RedirectConnection?, RedirectConnection?) in
            guard !state.isShutDown else { return (nil, nil) }
            if let redirect = state.redirect, redirect.node == target, !redirect.isClosed { return (redirect, nil) }
            let replaced = state.redirect
            state.redirect = RedirectConnection(node: target, configuration: configuration, connector: connector)
            return (state.redirect, replaced)
        }
        replaced?.close()
        guard let connection else {
            return completion([.failure(RedisError(.shutdown, "the Redis client was shut down"))])
        }
        connection.send([command], asking: redirect.kind == .ask, completion: completion)
    }

    /// The main connection reached `node`: a redirect connection there is not needed any
    /// more; it closes once what it carries has had time to answer.
    func retireRedirect(at node: HostPort?) {
        let retired = state.withLock { state -> RedirectConnection? in
            guard let redirect = state.redirect, redirect.node == node else { return nil }
            state.redirect = nil
            return redirect
        }
        guard let retired else { return }
        timers.asyncAfter(deadline: .now().advanced(by: configuration.commandTimeout)) { retired.close() }
    }
}
