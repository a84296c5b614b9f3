import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// Cluster mode's place for notifications acknowledged before they are stored (a Google Play
/// push waiting for the Developer API): the record under `inbox`, and in `inbox-claims` when
/// the claim of the instance working on it runs out. The holder renews its claims while it
/// works; an instance that stops or dies stops renewing, and any instance then takes the
/// record (`takeExpired`), so a push Google was told is stored is finished even when the
/// instance that took it never comes back. Two instances finishing the same push store it
/// once: the acknowledgement deduplicates by id.
///
/// A put is acknowledged as an event is: its reply, and with `wait-replicas` WAITAOF, before
/// the caller answers 2xx. Records are sealed under `cluster-key`; one that fails its check is
/// never acted on: it moves to `inbox-tampered`, as it was, with an error in the log.
public final class ClusterInbox: Sendable {
    static let putScript = RedisScript(source: """
        -- KEYS[1] inbox, KEYS[2] inbox-claims; ARGV[1] the id, ARGV[2] the sealed record,
        -- ARGV[3] when the claim runs out (UNIX ms).
        redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
        redis.call('ZADD', KEYS[2], ARGV[3], ARGV[1])
        return 'held'
        """)

    static let removeScript = RedisScript(source: """
        -- KEYS[1] inbox, KEYS[2] inbox-claims; ARGV[1] the id.
        redis.call('HDEL', KEYS[1], ARGV[1])
        return redis.call('ZREM', KEYS[2], ARGV[1])
        """)

    static let takeScript = RedisScript(source: """
        -- KEYS[1] inbox, KEYS[2] inbox-claims; ARGV[1] now (UNIX ms), ARGV[2] when the new
        -- claims run out, ARGV[3] at most how many. Returns id, record, id, record...
        local ids = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
        local taken = {}
        for _, id in ipairs(ids) do
          local record = redis.call('HGET', KEYS[1], id)
          if record then
            redis.call('ZADD', KEYS[2], ARGV[2], id)
            taken[#taken + 1] = id
            taken[#taken + 1] = record
          else
            redis.call('ZREM', KEYS[2], id)
          end
        end
        return taken
        """)

    static let setAsideScript = RedisScript(source: """
        -- KEYS[1] inbox, KEYS[2] inbox-claims, KEYS[3] inbox-tampered; ARGV[1] the id,
        -- ARGV[2] the record as it was read.
        if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
          return 0
        end
        redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
        redis.call('HDEL', KEYS[1], ARGV[1])
        redis.call('ZREM', KEYS[2], ARGV[1])
        return 1
        """)

    /// How long a claim lasts without renewal: the holder renews every quarter of it.
    public let claim: Duration
    private let client: RedisClient
    private let keys: ClusterKeys
    private let seal: ClusterSeal
    private let replicaWait: ReplicaWait
    private let clock: any TimeSource
    private let logger: Logger

    public init(client: RedisClient, keys: ClusterKeys = ClusterKeys(), seal: ClusterSeal, waitReplicas: Int = 0,
                waitTimeout: Duration = .seconds(1), claim: Duration = .seconds(120), clock: any TimeSource = WallClock(),
                logger: Logger) {
        self.client = client
        self.keys = keys
        self.seal = seal
        replicaWait = ReplicaWait(client: client, fence: keys.replicationFence, replicas: waitReplicas, timeout: waitTimeout)
        self.claim = claim
        self.clock = clock
        self.logger = logger
    }

    /// Keeps the notification `id` (`encoded`, as `StoredNotification.encoded()` makes it) on
    /// the server, claimed by this instance; `completion(nil)` once it is as durable as an
    /// acknowledged event, or with why not.
    public func put(id: String, encoded: [UInt8], completion: @escaping @Sendable (String?) -> Void) {
        let call = PutCall(keys: keys, id: id, record: seal.seal(encoded, .inbox, keys.inbox, id), claimedUntil: claimEnd())
        replicaWait.evaluate(call) { result, shortfall in
            switch result {
            case .failure(let error):
                completion("the cluster server did not keep it: \(error.message)")
            case .success(let reply) where reply.string != "held":
                completion("the cluster server refused it: \(reply.description.prefix(200))")
            case .success:
                completion(shortfall)
            }
        }
    }

    /// Forgets `id`: its event is stored.
    public func remove(_ id: String) {
        client.evaluate(Self.removeScript, keys: [keys.inbox, keys.inboxClaims], arguments: [Array(id.utf8)]) { [logger] result in
            if case .success(let reply) = result, reply.errorKind == nil { return }
            logger.warning("cluster inbox entry not removed; another instance finishes it again when its claim runs out (a duplicate then)",
                           [("event.id", id), ("error", Self.failure(result))])
        }
    }

    /// Extends the claims on `ids` (those this instance is working on); ids no longer in the
    /// inbox are left out (`XX`).
    public func renew(_ ids: some Collection<String>) {
        guard !ids.isEmpty else { return }
        let until = String(claimEnd())
        let command = RESPCommand("ZADD", [keys.inboxClaims, "XX"] + ids.flatMap { [until, $0] })
        client.send(command) { [logger] result in
            if case .success(let reply) = result, reply.errorKind == nil { return }
            logger.warning("cluster inbox claims not renewed; another instance may take them over", [("error", Self.failure(result))])
        }
    }

    /// Claims up to `limit` records whose claim ran out (their holder stopped renewing) and
    /// hands them over, with how many the server returned (a full page: ask again); nil when
    /// the server cannot be asked (the next call asks again).
    public func takeExpired(limit: Int = 100, completion: @escaping @Sendable (_ taken: [StoredNotification]?, _ page: Int) -> Void) {
        let now = clock.now().milliseconds
        let arguments = [ScriptArgument.number(now), ScriptArgument.number(claimEnd()), ScriptArgument.number(limit)]
        client.evaluate(Self.takeScript, keys: [keys.inbox, keys.inboxClaims], arguments: arguments) { [self] result in
            guard case .success(let reply) = result, reply.errorKind == nil, let elements = reply.elements else {
                logger.warning("cluster inbox not read; asked again shortly", [("error", Self.failure(result))])
                return completion(nil, 0)
            }
            var taken: [StoredNotification] = []
            for pair in stride(from: 0, to: elements.count - 1, by: 2) {
                guard let id = elements[pair].string, let stored = elements[pair + 1].bytes else { continue }
                guard case .intact(let bytes) = seal.open(stored, .inbox, keys.inbox, id),
                      let notification = StoredNotification(decoding: bytes), notification.id == id
                else {
                    setAside(id, stored, why: seal.open(stored, .inbox, keys.inbox, id).failure ?? "it does not decode")
                    continue
                }
                taken.append(notification)
            }
            completion(taken, elements.count / 2)
        }
    }

    /// Moves a record that failed its check to `inbox-tampered`, unless it changed since it
    /// was read (a genuine put of the same id is never moved).
    private func setAside(_ id: String, _ stored: [UInt8], why: String) {
        logger.error("cluster inbox entry fails its check; set aside in inbox-tampered, never acted on",
                     [("event.id", id), ("error", why)])
        client.evaluate(Self.setAsideScript, keys: [keys.inbox, keys.inboxClaims, keys.inboxTampered],
                        arguments: [Array(id.utf8), stored]) { [logger] result in
            if case .success(let reply) = result, reply.errorKind == nil { return }
            logger.warning("cluster inbox entry not set aside; met again when its claim runs out",
                           [("event.id", id), ("error", Self.failure(result))])
        }
    }

    private func claimEnd() -> Int64 { clock.now().milliseconds + claim.wholeMilliseconds }

    private static func failure(_ result: Result<RESPValue, RedisError>) -> String {
        switch result {
        case .failure(let error): error.message
        case .success(let reply): reply.description
        }
    }

    /// `put`'s input, in the order its header lists.
    struct PutCall: ScriptCall {
        static var script: RedisScript { ClusterInbox.putScript }
        var keys: [String]
        var arguments: [[UInt8]]

        init(keys: ClusterKeys, id: String, record: [UInt8], claimedUntil: Int64) {
            self.keys = [keys.inbox, keys.inboxClaims]
            arguments = [Array(id.utf8), record, ScriptArgument.number(claimedUntil)]
        }
    }
}
