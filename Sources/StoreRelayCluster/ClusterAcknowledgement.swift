import StoreRelayNet
import StoreRelayCore

/// Acceptance in cluster mode: one atomic script on the server dedupes the id (`SET NX EX`
/// with the dedupe window), stores the record once, and enqueues the id on every routed
/// destination's stream, or on the dead-letter stream with its reason. Apple's 200 waits for
/// its reply, and, with `waitReplicas`, for `WAITAOF` to report the write on that many
/// replicas' append-only files. Any failure, timeout or shortfall is `.unavailable`: 503,
/// never 200.
public final class ClusterAcknowledgement: Sendable {
    public enum Outcome: Sendable, Equatable {
        case stored
        case duplicate
        /// Nothing may be acknowledged: why, in one sentence.
        case unavailable(String)
    }

    static let script = RedisScript(source: """
        -- Cluster mode's acknowledgement (docs/SPEC.md "Cluster mode"), atomic on the server:
        -- KEYS[1] the id's dedupe marker, KEYS[2] the stored record, KEYS[3..] the streams to
        -- enqueue it on (each routed destination's, or the dead-letter stream).
        -- ARGV[1] the dedupe window in seconds, ARGV[2] the record, ARGV[3] the event id,
        -- ARGV[4] the dead-letter reason ('' for deliveries).
        if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then
          return 'duplicate'
        end
        redis.call('SET', KEYS[2], ARGV[2], 'EX', ARGV[1])
        for i = 3, #KEYS do
          redis.call('XADD', KEYS[i], '*', 'id', ARGV[3], 'reason', ARGV[4])
        end
        return 'stored'
        """)

    private let client: RedisClient
    private let keys: ClusterKeys
    private let dedupeWindowSeconds: Int64
    private let waitReplicas: Int
    private let waitTimeout: Duration

    public init(client: RedisClient, keys: ClusterKeys = ClusterKeys(), dedupeWindow: Duration,
                waitReplicas: Int = 0, waitTimeout: Duration = .seconds(1)) {
        self.client = client
        self.keys = keys
        dedupeWindowSeconds = max(1, dedupeWindow.wholeMilliseconds / 1000)
        self.waitReplicas = waitReplicas
        self.waitTimeout = waitTimeout
    }

    /// Acknowledges event `id`: enqueued on `destinations`' streams, or, when `deadLetterReason`
    /// is given (`unrouted`, `quarantined`), on the dead-letter stream instead.
    public func acknowledge(
        id: String, record: [UInt8], destinations: [String], deadLetterReason: String? = nil,
        completion: @escaping @Sendable (Outcome) -> Void
    ) {
        let streams = deadLetterReason == nil ? destinations.map(keys.queue) : [keys.deadLetters]
        let arguments: [[UInt8]] = [Array(String(dedupeWindowSeconds).utf8), record, Array(id.utf8), Array((deadLetterReason ?? "").utf8)]
        client.evaluate(Self.script, keys: [keys.seen(id), keys.event(id)] + streams, arguments: arguments) { [self] result in
            switch result {
            case .failure(let error):
                completion(.unavailable("the cluster server did not acknowledge it: \(error.message)"))
            case .success(let reply) where reply.errorKind != nil:
                completion(.unavailable("the cluster server refused it: \(reply.description)"))
            case .success(let reply) where reply.string == "duplicate":
                completion(.duplicate)
            case .success(let reply) where reply.string == "stored":
                guard waitReplicas > 0 else { return completion(.stored) }
                waitForReplicas(completion)
            case .success(let reply):
                completion(.unavailable("the cluster server answered the acknowledgement with \(reply.description)"))
            }
        }
    }

    /// `WAITAOF 1 N timeout`: the write is in this server's append-only file and in `N`
    /// replicas' (Redis ≥ 7.2, Valkey). Short of that, the notification is not acknowledged;
    /// Apple retries it, and the retry is a duplicate that waits again.
    private func waitForReplicas(_ completion: @escaping @Sendable (Outcome) -> Void) {
        let command = RESPCommand("WAITAOF", "1", String(waitReplicas), String(max(1, waitTimeout.wholeMilliseconds)))
        client.send(command) { [waitReplicas] result in
            switch result {
            case .failure(let error):
                completion(.unavailable("WAITAOF failed: \(error.message)"))
            case .success(let reply):
                if let error = reply.errorKind {
                    return completion(.unavailable("the server cannot WAITAOF (\(error)): wait-replicas needs Redis 7.2 or Valkey"))
                }
                let counts = reply.elements?.compactMap(\.integer) ?? []
                guard counts.count == 2, counts[0] >= 1, counts[1] >= Int64(waitReplicas) else {
                    return completion(.unavailable("WAITAOF reached \(counts.last ?? 0) of \(waitReplicas) replicas in time"))
                }
                completion(.stored)
            }
        }
    }
}
