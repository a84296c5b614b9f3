import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// Acceptance in cluster mode: one atomic script on the server dedupes the id (`SET NX EX`
/// with the dedupe window), stores the record once, and enqueues the id on every routed
/// destination's stream, or writes its dead letter (`unrouted`, `quarantined`). Apple's 200
/// waits for its reply, and, with `waitReplicas`, for `WAITAOF` to report the write on that
/// many replicas' append-only files; so does a duplicate's (`ReplicaWait`). Any failure,
/// timeout or shortfall is `.unavailable`: 503, never 200.
///
/// Acknowledgements take turns over several connections (`lanes`). With `appendfsync
/// always` the server fsyncs once per pass of its event loop, and in each pass it reads one
/// buffer per connection: an acknowledgement carries its record (tens of KB), so one
/// connection gives about two notifications per fsync, and on a disk whose fsync takes
/// milliseconds that, not the CPU, bounds what an instance acknowledges (Benchmarks/README.md).
public final class ClusterAcknowledgement: Sendable {
    public enum Outcome: Sendable, Equatable {
        case stored
        case duplicate
        /// Nothing may be acknowledged: why, in one sentence.
        case unavailable(String)
    }

    static let script = RedisScript(source: ClusterLua.finish + """
        -- Cluster mode's acknowledgement (docs/SPEC.md "Cluster mode"), atomic on the server:
        -- KEYS[1] the id's dedupe marker, KEYS[2] the record, KEYS[3] the event's state,
        -- KEYS[4..] the streams to enqueue it on (each routed destination's).
        -- ARGV[1] the dedupe window in seconds, ARGV[2] the record, ARGV[3] the event id,
        -- ARGV[4] the key prefix, ARGV[5] now (UNIX ms), ARGV[6] the recent-events capacity,
        -- ARGV[7] the original transaction id ('' for none), ARGV[8] a dead letter's id
        -- ('' for deliveries), ARGV[9] its JSON, ARGV[10] its index entry.
        if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
          return 'duplicate'
        end
        local prefix, id = ARGV[4], ARGV[3]
        redis.call('SET', KEYS[2], ARGV[2])
        redis.call('HSET', KEYS[3], '_remaining', #KEYS - 3, '_subscription', ARGV[7])
        if ARGV[7] ~= '' then
          redis.call('ZADD', prefix .. 'subscription:' .. ARGV[7], ARGV[5], id)
        end
        for i = 4, #KEYS do
          redis.call('XADD', KEYS[i], '*', 'id', id)
        end
        if ARGV[8] ~= '' then
          keepLetter(prefix, ARGV[8], ARGV[9], ARGV[10], '')
        end
        if #KEYS == 3 then
          finish(prefix, id, ARGV[5], ARGV[6])
        end
        return 'stored'
        """)

    private let client: RedisClient
    private let lanes: [Lane]
    private let turn = Locked(0)
    private let keys: ClusterKeys
    private let seal: ClusterSeal
    private let dedupeWindowSeconds: Int64
    private let recentEvents: Int
    private let clock: any TimeSource

    /// One connection acknowledgements take turns on, with its own replica wait (WAITAOF
    /// waits for the writes of its own connection).
    private struct Lane: Sendable {
        let client: RedisClient
        let replicaWait: ReplicaWait
    }

    /// `client` is the instance's shared client; `lanes`, more clients of the same server
    /// (started and shut down by the caller) that acknowledgements spread over while connected.
    public init(client: RedisClient, lanes: [RedisClient] = [], keys: ClusterKeys = ClusterKeys(), dedupeWindow: Duration,
                recentEvents: Int = 2_000, waitReplicas: Int = 0, waitTimeout: Duration = .seconds(1), seal: ClusterSeal = .off,
                clock: any TimeSource = WallClock()) {
        self.client = client
        self.lanes = ([client] + lanes).map {
            Lane(client: $0, replicaWait: ReplicaWait(client: $0, fence: keys.replicationFence, replicas: waitReplicas, timeout: waitTimeout))
        }
        self.keys = keys
        self.seal = seal
        dedupeWindowSeconds = max(1, dedupeWindow.wholeMilliseconds / 1000)
        self.recentEvents = max(1, recentEvents)
        self.clock = clock
    }

    /// The next connected lane in turn; the shared client's when none is (its error is the 503's).
    private func nextLane() -> Lane {
        let first = turn.withLock { turn in
            defer { turn = (turn + 1) % lanes.count }
            return turn
        }
        for offset in 0..<lanes.count where lanes[(first + offset) % lanes.count].client.isConnected {
            return lanes[(first + offset) % lanes.count]
        }
        return lanes[0]
    }

    /// Acknowledges `notification`: enqueued on each of its destinations' streams, or, when
    /// it has none or is quarantined, kept as a dead letter.
    public func acknowledge(_ notification: StoredNotification, completion: @escaping @Sendable (Outcome) -> Void) {
        let now = clock.now()
        var letter: DeadLetter?
        switch notification.disposition {
        case .quarantine(let reason):
            letter = DeadLetter(notification: notification, destination: nil, reason: .quarantined, detail: reason,
                                attempts: [], createdAt: now)
        case .accept where notification.destinations.isEmpty:
            letter = DeadLetter(notification: notification, destination: nil, reason: .unrouted,
                                detail: DeliveryEngine.noRouteDetail(notification), attempts: [], createdAt: now)
        case .accept:
            break
        }
        let call = AcknowledgeCall(
            keys: keys, eventId: notification.id, streams: letter == nil ? notification.destinations.map(keys.queue) : [],
            sealedRecord: seal.seal(notification.encoded(), .event, notification.id), dedupeWindowSeconds: dedupeWindowSeconds,
            now: now.milliseconds, recentEvents: recentEvents, subscription: notification.event.originalTransactionId,
            letter: letter.map { ($0.id, seal.seal($0.json.serializedBytes(), .letter, $0.id), DeadLetterEntry($0).json.serializedBytes()) })
        nextLane().replicaWait.evaluate(call, wroteNothing: { AcknowledgeCall.Reply($0) == .duplicate }) { result, shortfall in
            switch result {
            case .failure(let error):
                completion(.unavailable("the cluster server did not acknowledge it: \(error.message)"))
            case .success(let reply) where reply.errorKind != nil:
                completion(.unavailable("the cluster server refused it: \(reply.description)"))
            case .success(let reply):
                guard let answer = AcknowledgeCall.Reply(reply) else {
                    return completion(.unavailable("the cluster server answered the acknowledgement with \(reply.description)"))
                }
                if let shortfall { return completion(.unavailable(shortfall)) }
                completion(answer == .stored ? .stored : .duplicate)
            }
        }
    }

    /// Whether `id` was acknowledged within the dedupe window (a dry run's question).
    public func contains(id: String, completion: @escaping @Sendable (Result<Bool, RedisError>) -> Void) {
        client.send(RESPCommand("EXISTS", keys.seen(id))) { result in
            completion(result.map { $0.integer == 1 })
        }
    }
}
