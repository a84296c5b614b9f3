import StoreRelayNet
import StoreRelayCore

/// `wait-replicas N` (docs/SPEC.md "Cluster mode", Replicas): after the acknowledgement
/// script, `WAITAOF 1 N timeout` on the same connection, and the script's reply counts only
/// once WAITAOF reports the writes in this server's append-only file and in N replicas'.
///
/// A duplicate waits as the first acceptance did. When the script finds the id already seen
/// (Apple's retry, or another instance's copy) it writes nothing, so WAITAOF, which waits for
/// the last write *of its own connection*, would have nothing to wait for; yet the first
/// acceptance, here or on another instance, may not have reached the replicas: it was
/// answered 503 for that, and a 200 `duplicate` now would tell Apple to stop retrying a
/// notification a failover could still lose. So a duplicate first writes the fence key: that
/// write comes after the first acceptance's in the server's one replication stream, and
/// waiting for it waits for them.
///
/// Each command waits for the previous reply, and WAITAOF waits in slices of `slice`: a
/// replica reports its append-only file's progress when a WAITAOF asks, and, asked before it
/// has synced the write, next reports it only a second later, on its own schedule. Asking
/// again soon (each WAITAOF asks) keeps that one-second stall to a slice. One WAITAOF at a
/// time per connection serves every acknowledgement waiting there (`ReplicaWaitBatches`).
struct ReplicaWait: Sendable {
    static let slice: Duration = .milliseconds(50)

    let client: RedisClient
    let fence: String
    let replicas: Int
    let timeout: Duration
    let batches: ReplicaWaitBatches

    init(client: RedisClient, fence: String, replicas: Int, timeout: Duration) {
        self.client = client
        self.fence = fence
        self.replicas = replicas
        self.timeout = timeout
        batches = ReplicaWaitBatches(replicas: replicas)
    }

    /// Runs `call`; `completion` gets its result and, when replicas are awaited, why its
    /// writes (and those before them) are not known to be on them (nil: they are, or no wait).
    /// `wroteNothing` tells the replies of a call that found its work done already (an
    /// acknowledgement's duplicate): those wait behind the fence instead.
    func evaluate<Call: ScriptCall>(_ call: Call, wroteNothing: @escaping @Sendable (RESPValue) -> Bool = { _ in false },
                                    completion: @escaping @Sendable (Result<RESPValue, RedisError>, _ shortfall: String?) -> Void) {
        guard replicas > 0 else {
            return client.evaluate(call) { completion($0, nil) }
        }
        let session: RedisSession
        switch client.session() {
        case .success(let current):
            session = current
        case .failure(let error):
            return client.configuration.callbackQueue.async { completion(.failure(error), nil) }
        }
        session.evaluate(Call.script, keys: call.keys, arguments: call.arguments) { [self] result in
            guard case .success(let reply) = result, reply.errorKind == nil else { return completion(result, nil) }
            let deadline = MonotonicClock.nanoseconds() + UInt64(max(1, timeout.wholeMilliseconds)) * 1_000_000
            guard wroteNothing(reply) else {
                return batches.wait(on: session, until: deadline) { completion(result, $0) }
            }
            session.send(RESPCommand("SET", fence, "1")) { [batches] written in
                if let shortfall = Self.fenceShortfall(written) { return completion(result, shortfall) }
                batches.wait(on: session, until: deadline) { completion(result, $0) }
            }
        }
    }

    static func fenceShortfall(_ written: Result<RESPValue, RedisError>) -> String? {
        switch written {
        case .failure(let error): "the write WAITAOF waits for failed: \(error.message)"
        case .success(let reply) where reply.errorKind != nil: "the write WAITAOF waits for was refused: \(reply.description.prefix(200))"
        case .success: nil
        }
    }

    /// nil when WAITAOF saw the writes in the local AOF and in `replicas` others.
    static func shortfall(_ result: Result<RESPValue, RedisError>, replicas: Int) -> String? {
        switch result {
        case .failure(let error):
            return "WAITAOF failed: \(error.message)"
        case .success(let reply) where reply.errorKind != nil:
            return "the server cannot WAITAOF (\(reply.description.prefix(200))): wait-replicas needs Redis 7.2 or Valkey"
        case .success(let reply):
            let counts = reply.elements?.compactMap(\.integer) ?? []
            guard counts.count == 2, counts[0] >= 1, counts[1] >= Int64(replicas) else {
                return "WAITAOF reached \(counts.last ?? 0) of \(replicas) replicas in time"
            }
            return nil
        }
    }
}
