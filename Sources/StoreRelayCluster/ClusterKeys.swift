/// The keys cluster mode keeps on the Redis or Valkey server (docs/SPEC.md "Cluster mode",
/// "Keys on the server").
///
/// Every name starts with `storerelay:` and carries the hash tag `{storerelay}`: Redis
/// Cluster and Valkey cluster place all keys with one tag in one slot, so one script may
/// touch the dedupe marker, the record and every stream at once (and, when the window of
/// recent events is trimmed, the records it derives from the prefix).
public struct ClusterKeys: Sendable, Hashable {
    public static let prefix = "storerelay:{storerelay}:"

    public init() {}

    /// `seen:<id>`: present (with the dedupe window as TTL) once the id was acknowledged.
    public func seen(_ id: String) -> String { Self.prefix + "seen:" + id }
    /// `event:<id>`: the stored notification record (as the journal stores it), kept while a
    /// delivery is unfinished and then while the event is among the recent ones.
    public func event(_ id: String) -> String { Self.prefix + "event:" + id }
    /// `state:<id>`: a hash of each destination's delivery state (JSON), `_remaining` (the
    /// deliveries not finished) and `_subscription` (the original transaction id).
    public func state(_ id: String) -> String { Self.prefix + "state:" + id }
    /// `queue:<destination>`: the destination's stream of event ids to deliver.
    public func queue(_ destination: String) -> String { Self.prefix + "queue:" + destination }
    /// `delayed:<destination>`: event ids waiting for a retry, scored by their due time.
    public func delayed(_ destination: String) -> String { Self.prefix + "delayed:" + destination }
    /// `progress:<destination>`: each retried event's attempts and budget there (JSON).
    public func progress(_ destination: String) -> String { Self.prefix + "progress:" + destination }
    /// `recent`: finished events by finishing time (UNIX ms), trimmed to `recent-events`.
    public var recent: String { Self.prefix + "recent" }
    /// `turns:<destination>`: with `order per-subscription`, each subscription's event on its
    /// way there (original transaction id → event id).
    public func turns(_ destination: String) -> String { Self.prefix + "turns:" + destination }
    /// `subscription:<originalTransactionId>`: the known events of one subscription.
    public func subscription(_ originalTransactionId: String) -> String { Self.prefix + "subscription:" + originalTransactionId }
    /// `letters`: every dead letter, by id (JSON, as single-node mode writes its files).
    public var letters: String { Self.prefix + "letters" }
    /// `letter-index`: what listings filter by, per dead letter id (small JSON).
    public var letterIndex: String { Self.prefix + "letter-index" }
    /// `letter-counts`: dead letters per destination ("" for unrouted and quarantined).
    public var letterCounts: String { Self.prefix + "letter-counts" }
    /// `tampered-letters`: what a `tampered` dead letter stands in for, kept as it was on the
    /// server: under `<letter id>` the letter that failed its check when a replay met it,
    /// under `<letter id>:event` and `<letter id>:progress` the event record and progress a
    /// delivery could not open. A replay of the `tampered` letter takes them up again once
    /// they check out (the keys fixed); they leave with the letter.
    public var tamperedLetters: String { Self.prefix + "tampered-letters" }
    /// `instances`: live instances by their last heartbeat (UNIX ms).
    public var instances: String { Self.prefix + "instances" }
    /// `instance:<id>`: what an instance says about itself (JSON), expiring with its heartbeat.
    public func instance(_ id: String) -> String { Self.prefix + "instance:" + id }
    /// `claim:<id>`: the token of the one live process using instance id `<id>`, expiring
    /// with its heartbeat (`InstanceClaim`).
    public func claim(_ id: String) -> String { Self.prefix + "claim:" + id }
    /// `replaying:<letter id>`: present while a replay of that dead letter is unfinished.
    public func replaying(_ letterId: String) -> String { Self.prefix + "replaying:" + letterId }
    /// `lease:<name>`: held by one instance at a time (reconciliation with Apple).
    public func lease(_ name: String) -> String { Self.prefix + "lease:" + name }
    /// `epoch`: a random id written once (`SET` when missing, in the check's script); gone
    /// or changed, the server lost its data (`ClusterEpoch`).
    public var epoch: String { Self.prefix + "epoch" }
    /// `epoch-clock`: incremented by every instance's epoch check; lower than an instance
    /// saw before, the server lost writes.
    public var epochClock: String { Self.prefix + "epoch-clock" }
    /// `replication-fence`: written in the pipeline before each `WAITAOF`, so the wait covers
    /// every write the server made before it, another instance's included (`ReplicaWait`).
    public var replicationFence: String { Self.prefix + "replication-fence" }
    /// `paused`: the set of destinations an operator paused. Every instance reads it at each
    /// maintenance tick of each destination (about once a second), so a pause made through
    /// one instance holds on all within a tick, and survives every restart.
    public var paused: String { Self.prefix + "paused" }
    /// `log:event:<id>`: the event log's summary of one event (`_`, JSON) and each
    /// destination's delivery state (`d:<name>`), expiring after `event-log`.
    public func logEvent(_ id: String) -> String { Self.prefix + "log:event:" + id }
    /// `log:time`: every logged event id by `receivedAt` (UNIX ms), trimmed to `event-log`.
    public var logTime: String { Self.prefix + "log:time" }
    /// `log:key:<id>`: the events an originalTransactionId or transactionId names, by
    /// `receivedAt`, expiring `event-log` after the last one.
    public func logKey(_ key: String) -> String { Self.prefix + "log:key:" + key }
    /// `inbox`: notifications acknowledged but not yet stored (a Google Play push waiting for
    /// the Developer API), by event id (the record as `event:<id>` holds it, sealed).
    public var inbox: String { Self.prefix + "inbox" }
    /// `inbox-claims`: each `inbox` id by when its holder's claim runs out (UNIX ms); past
    /// it, any instance takes the record (`ClusterInbox`).
    public var inboxClaims: String { Self.prefix + "inbox-claims" }
    /// `inbox-tampered`: `inbox` records that failed their check, as they were, for an operator.
    public var inboxTampered: String { Self.prefix + "inbox-tampered" }
    /// The consumer group every instance joins on every destination's stream.
    public static let group = "storerelay"
}

/// Lua shared by the scripts that finish an event's last delivery.
enum ClusterLua {
    /// `passTurn(prefix, destination, id, stream, gap)`: `order per-subscription`'s release.
    /// When event `id` held its subscription's turn at `destination`, the next event held
    /// behind it (in `held:<destination>:<subscription>`, in the order they were read, which
    /// is stream order) goes back into the stream and takes the turn, carrying `gap` (the id
    /// of a dead-lettered event; '' for none); with none held the turn is given up.
    static let passTurn = """
        local function passTurn(prefix, destination, id, stream, gap)
          local turns = prefix .. 'turns:' .. destination
          if redis.call('EXISTS', turns) == 0 then
            return
          end
          local subscription = redis.call('HGET', prefix .. 'state:' .. id, '_subscription')
          if not subscription or subscription == '' or redis.call('HGET', turns, subscription) ~= id then
            return
          end
          local nextId = redis.call('LPOP', prefix .. 'held:' .. destination .. ':' .. subscription)
          if not nextId then
            redis.call('HDEL', turns, subscription)
            return
          end
          redis.call('HSET', turns, subscription, nextId)
          if gap ~= '' then
            redis.call('XADD', stream, '*', 'id', nextId, 'gap', gap)
          else
            redis.call('XADD', stream, '*', 'id', nextId)
          end
        end

        """

    /// `finish(prefix, id, now, capacity)`: the event joins the window of recent events;
    /// those pushed out of the window (64 at a time) lose their record, state and
    /// subscription entry.
    static let finish = """
        local function finish(prefix, id, now, capacity)
          local recent = prefix .. 'recent'
          redis.call('ZADD', recent, now, id)
          -- Trimmed 64 at a time (the window holds up to 63 more than its capacity), so most
          -- finishes cost two commands here rather than eight.
          local excess = redis.call('ZCARD', recent) - tonumber(capacity)
          if excess >= 64 then
            for _, old in ipairs(redis.call('ZRANGE', recent, 0, excess - 1)) do
              local subscription = redis.call('HGET', prefix .. 'state:' .. old, '_subscription')
              if subscription and subscription ~= '' then
                redis.call('ZREM', prefix .. 'subscription:' .. subscription, old)
              end
              redis.call('DEL', prefix .. 'event:' .. old, prefix .. 'state:' .. old)
            end
            redis.call('ZREMRANGEBYRANK', recent, 0, excess - 1)
          end
        end
        -- A dead letter written (or replaced): counted once per id, under its destination
        -- ('' for unrouted and quarantined).
        local function keepLetter(prefix, id, json, entry, counted)
          if redis.call('HSET', prefix .. 'letters', id, json) == 1 then
            redis.call('HINCRBY', prefix .. 'letter-counts', counted, 1)
          end
          redis.call('HSET', prefix .. 'letter-index', id, entry)
        end
        -- A dead letter gone (deleted, or its replay delivered); 1 when it existed. What its
        -- `tampered` letter stood in for goes with it.
        local function dropLetter(prefix, id)
          redis.call('HDEL', prefix .. 'tampered-letters', id, id .. ':event', id .. ':progress')
          local entry = redis.call('HGET', prefix .. 'letter-index', id)
          if not entry then
            return 0
          end
          local counted = cjson.decode(entry).destination
          if type(counted) ~= 'string' then
            counted = ''
          end
          redis.call('HDEL', prefix .. 'letters', id)
          redis.call('HDEL', prefix .. 'letter-index', id)
          redis.call('HINCRBY', prefix .. 'letter-counts', counted, -1)
          redis.call('DEL', prefix .. 'replaying:' .. id)
          return 1
        end

        """
}
