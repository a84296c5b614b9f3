import StoreRelayNet

/// Consumers of dead instances (docs/SPEC.md "Cluster mode on managed and replicated
/// servers", Hygiene): every instance that ever read a destination stays a consumer of its
/// group, and with instance ids like `hostname-pid` each restart adds one. Once another
/// instance has claimed a dead one's pending entries, nothing refers to it any more, and it
/// is removed, so `XINFO CONSUMERS` lists the live instances and a few recent dead ones.
extension ClusterQueue {
    /// Removes every consumer with nothing pending whose instance holds no claim on its id
    /// (`InstanceClaim`: it lapses `lifetime` after the last heartbeat), this one excepted.
    /// One script: a consumer that reads an entry between the check and the removal would
    /// lose it from the pending list (`XGROUP DELCONSUMER` drops its pending entries), so
    /// nothing may run between them. A live instance of a version without claims that
    /// loses its consumer this way gets a new one with its next read.
    static let removeDeadConsumers = RedisScript(source: """
        -- KEYS[1] the stream; ARGV[1] the group, ARGV[2] the claim keys' prefix, ARGV[3] this
        -- consumer. Returns the consumers removed.
        if redis.call('EXISTS', KEYS[1]) == 0 then
          return {}
        end
        local removed = {}
        for _, fields in ipairs(redis.call('XINFO', 'CONSUMERS', KEYS[1], ARGV[1])) do
          local name, pending
          for i = 1, #fields, 2 do
            if fields[i] == 'name' then
              name = fields[i + 1]
            elseif fields[i] == 'pending' then
              pending = fields[i + 1]
            end
          end
          if name and name ~= ARGV[3] and pending == 0 and redis.call('EXISTS', ARGV[2] .. name) == 0 then
            redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], name)
            table.insert(removed, name)
          end
        end
        return removed
        """)

    /// Removes the consumers of dead instances whose entries others have claimed; returns
    /// their names.
    public func removeDeadConsumers(completion: @escaping @Sendable (Result<[String], RedisError>) -> Void) {
        client.evaluate(RemoveDeadConsumersCall(stream: keys.queue(destination), claimPrefix: keys.claim(""), consumer: consumer)) { result in
            completion(result.flatMap { reply in
                if let error = reply.errorKind { return .failure(RedisError(.protocolError, "removing dead consumers: \(error)")) }
                return .success((reply.elements ?? []).compactMap(\.string))
            })
        }
    }
}
