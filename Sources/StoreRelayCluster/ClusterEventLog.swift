import StoreRelayDelivery
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore

/// Cluster mode's event log (docs/SPEC.md "Event log"), on the shared server so every
/// instance answers `GET /api/events` alike: per event a hash (`log:event:<id>`, the summary
/// as JSON and one field per destination's state) expiring after `event-log`; a sorted set of
/// every id by `receivedAt` (`log:time`) for listing; a sorted set per originalTransactionId
/// and transactionId (`log:key:<id>`) for `q`. A lookup reads one sorted set and the hashes
/// it names, so its cost does not grow with the log; memory on the server does, by what
/// README states per event.
///
/// Written after the acknowledgement (never before Apple's 200) and without waiting: like
/// the single-node log it is an index, and a write the server refuses is logged and lost.
/// Not sealed with `cluster-key`: it shows what instances wrote, `/api/events/{id}` still
/// shows only records that pass their check.
public final class ClusterEventLog: Sendable {
    let client: RedisClient
    let retention: Duration
    let clock: any TimeSource
    let logger: Logger
    let keys = ClusterKeys()
    /// Records a listing without `q` reads from the server per request at most.
    let scanBudget: Int

    public init(client: RedisClient, retention: Duration, clock: any TimeSource, logger: Logger, scanBudget: Int = 20_000) {
        self.client = client
        self.retention = retention
        self.clock = clock
        self.logger = logger
        self.scanBudget = scanBudget
    }

    /// Logs an acknowledged event, each of its deliveries pending.
    public func append(_ notification: StoredNotification) {
        let routed = notification.disposition == .accept ? notification.destinations : []
        let summary = EventSummary(notification: notification, destinations: routed)
        let at = String(summary.receivedAt.milliseconds)
        let ttl = String(retention.wholeMilliseconds)
        let id = summary.id
        var fields = ["_", String(decoding: Self.encode(summary), as: UTF8.self)]
        for delivery in summary.deliveries { fields += ["d:" + delivery.destination, delivery.state.name] }
        var commands = [
            RESPCommand("HSET", [keys.logEvent(id)] + fields), RESPCommand("PEXPIRE", keys.logEvent(id), ttl),
            RESPCommand("ZADD", keys.logTime, at, id),
            RESPCommand("ZREMRANGEBYSCORE", keys.logTime, "-inf", "(" + String(clock.now().milliseconds - retention.wholeMilliseconds)),
        ]
        for key in summary.searchKeyList where key != id {
            commands += [RESPCommand("ZADD", keys.logKey(key), at, id), RESPCommand("PEXPIRE", keys.logKey(key), ttl)]
        }
        client.send(commands) { [logger] results in
            for case .failure(let error) in results {
                return logger.warning("event log entry not written on the cluster server", [("event.id", id), ("error", "\(error)")])
            }
        }
    }

    /// The state of the delivery of `eventId` to `destination`, if the event is still logged
    /// (a state never revives an expired entry without its summary).
    public func setState(_ state: EventSummary.State, eventId: String, destination: String) {
        let script = "if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2]) end return 0"
        client.send(RESPCommand("EVAL", script, "1", keys.logEvent(eventId), "d:" + destination, state.name)) { [logger] result in
            if case .failure(let error) = result {
                logger.warning("event log state not written on the cluster server", [("event.id", eventId), ("error", "\(error)")])
            }
        }
    }
}

extension EventSummary {
    /// The keys `q` finds the event by, the event id first.
    var searchKeyList: [String] {
        var keys = [id]
        for key in [originalTransactionId, transactionId] {
            if let key, !key.isEmpty, !keys.contains(key) { keys.append(key) }
        }
        return keys
    }
}
