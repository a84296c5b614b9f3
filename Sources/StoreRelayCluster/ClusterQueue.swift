import StoreRelayNet
import StoreRelayCore

/// One destination's queue on the server, as every instance shares it (docs/SPEC.md
/// "Cluster mode", Delivery): a stream read through one consumer group, each instance a
/// consumer; a delayed sorted set for retries, moved back by any instance; idle entries of a
/// dead instance claimed by the others.
///
/// Every step that changes more than one key is one script, so a crash between two commands
/// can neither lose an entry nor leave it in two places. A step on an entry another instance
/// already finished (it claimed the entry after this one idled) changes nothing.
public final class ClusterQueue: Sendable {
    /// One event to deliver: its stream entry and its id.
    public struct Entry: Sendable, Equatable, Hashable {
        public var streamId: String
        public var eventId: String
        /// With `order per-subscription`: the dead-lettered event of the same subscription
        /// that released this one (`StoreRelay-Ordering-Gap`).
        public var orderingGap: String?

        public init(streamId: String, eventId: String, orderingGap: String? = nil) {
            self.streamId = streamId
            self.eventId = eventId
            self.orderingGap = orderingGap
        }
    }

    /// What `claimIdle` took over, and the entries it found deleted while pending: each is an
    /// event acknowledged to Apple that no instance can deliver any more.
    public struct Claimed: Sendable, Equatable {
        public var entries: [Entry]
        public var lost: [String]
    }

    /// How one delivery ended, for `finish`: the destination's final state of the event, and
    /// the dead letter to keep or the replayed one to drop.
    public struct Finish: Sendable {
        /// `EventDeliveryState.Delivery` JSON.
        public var state: [UInt8]
        public var letter: (id: String, json: [UInt8], entry: [UInt8])?
        /// The dead letter this delivery replayed: it leaves the store once delivered (a
        /// failed replay wrote it again instead).
        public var replayed: String?
        public var now: Int64
        public var recentEvents: Int
        /// Set when `letter` is a `tampered` one: the event record and progress as read (nil
        /// for none), kept aside under the letter's id in `tampered-letters`, so a replay
        /// can take them up once they check out. Such a letter never replaces one already
        /// stored under its id (a genuine letter whose replay this was stays replayable).
        public var tampered: (event: [UInt8]?, progress: [UInt8]?)?

        public init(state: [UInt8], letter: (id: String, json: [UInt8], entry: [UInt8])?, replayed: String?, now: Int64, recentEvents: Int,
                    tampered: (event: [UInt8]?, progress: [UInt8]?)? = nil) {
            self.state = state
            self.letter = letter
            self.replayed = replayed
            self.now = now
            self.recentEvents = recentEvents
            self.tampered = tampered
        }
    }

    public let destination: String
    public let consumer: String
    let client: RedisClient
    let keys: ClusterKeys

    static let finish = RedisScript(source: ClusterLua.finish + ClusterLua.passTurn + """
        -- One delivery finished (delivered, or dead-lettered). KEYS[1] the stream, KEYS[2] the
        -- progress hash, KEYS[3] the event's state; ARGV[1] the group, ARGV[2] the entry,
        -- ARGV[3] the event id, ARGV[4] the destination, ARGV[5] its final state, ARGV[6] the
        -- prefix, ARGV[7] now, ARGV[8] the recent-events capacity, ARGV[9..11] a dead letter
        -- (id, JSON, index entry; '' for none), ARGV[12] the dead letter this delivery
        -- replayed ('' for none), ARGV[13] '1' when the letter is a tampered one, ARGV[14]
        -- and ARGV[15] then the event record and the progress as read ('' for none).
        local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
        redis.call('XDEL', KEYS[1], ARGV[2])
        if acked == 0 then
          return 0
        end
        local prefix = ARGV[6]
        redis.call('HDEL', KEYS[2], ARGV[3])
        -- Whatever the destination's `order` says now: a reload may just have dropped it.
        passTurn(prefix, ARGV[4], ARGV[3], KEYS[1], ARGV[9] ~= '' and ARGV[3] or '')
        if ARGV[13] == '1' then
          -- Nothing that failed is lost: kept aside for a replay once it checks out, and a
          -- letter already stored under the id is left as it is.
          local aside = prefix .. 'tampered-letters'
          if ARGV[14] ~= '' then
            redis.call('HSET', aside, ARGV[9] .. ':event', ARGV[14])
          end
          if ARGV[15] ~= '' then
            redis.call('HSET', aside, ARGV[9] .. ':progress', ARGV[15])
          end
          if redis.call('HEXISTS', prefix .. 'letters', ARGV[9]) == 0 then
            keepLetter(prefix, ARGV[9], ARGV[10], ARGV[11], ARGV[4])
          end
        elseif ARGV[9] ~= '' then
          keepLetter(prefix, ARGV[9], ARGV[10], ARGV[11], ARGV[4])
        end
        if ARGV[9] ~= '' then
          -- The event's delivery there ended: so did any replay of the letter it ends in
          -- (even one whose progress, naming it, could not be read).
          redis.call('DEL', prefix .. 'replaying:' .. ARGV[9])
        end
        if ARGV[12] ~= '' then
          redis.call('DEL', prefix .. 'replaying:' .. ARGV[12])
          if ARGV[9] == '' then
            dropLetter(prefix, ARGV[12])
          end
        end
        if redis.call('EXISTS', KEYS[3]) == 1 then
          redis.call('HSET', KEYS[3], ARGV[4], ARGV[5])
          if redis.call('HINCRBY', KEYS[3], '_remaining', -1) <= 0 then
            finish(prefix, ARGV[3], ARGV[7], ARGV[8])
          end
        end
        return 1
        """)

    static let retry = RedisScript(source: """
        -- One entry to try again later: out of the stream, into the delayed set at its due
        -- time, its attempts kept. KEYS[1] the stream, KEYS[2] the delayed set, KEYS[3] the
        -- progress hash, KEYS[4] the event's state; ARGV[1] the group, ARGV[2] the entry,
        -- ARGV[3] the event id, ARGV[4] the due time (UNIX ms), ARGV[5] the progress,
        -- ARGV[6] the destination, ARGV[7] its state.
        local acked = redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
        redis.call('XDEL', KEYS[1], ARGV[2])
        if acked == 0 then
          return 0
        end
        redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
        redis.call('HSET', KEYS[3], ARGV[3], ARGV[5])
        if redis.call('EXISTS', KEYS[4]) == 1 then
          redis.call('HSET', KEYS[4], ARGV[6], ARGV[7])
        end
        return 1
        """)

    static let readInTurn = RedisScript(source: """
        -- `order per-subscription`: reads new entries as XREADGROUP does, and in the same step
        -- gives each event its subscription's turn, or holds it when an earlier event of the
        -- subscription has the turn (in flight on any instance, or waiting to retry). Reading
        -- and taking turns in one step is what keeps stream (acceptance) order across
        -- instances. A held entry leaves the stream; `passTurn` puts it back.
        -- KEYS[1] the stream, KEYS[2] the destination's turns; ARGV[1] the group, ARGV[2] the
        -- consumer, ARGV[3] at most this many, ARGV[4] the prefix, ARGV[5] the destination.
        local reply = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', tonumber(ARGV[3]), 'STREAMS', KEYS[1], '>')
        if not reply then
          return {}
        end
        local entries = {}
        for _, entry in ipairs(reply[1][2]) do
          local fields, id = entry[2], ''
          for i = 1, #fields, 2 do
            if fields[i] == 'id' then id = fields[i + 1] end
          end
          local subscription = id ~= '' and redis.call('HGET', ARGV[4] .. 'state:' .. id, '_subscription') or ''
          local holder = subscription and subscription ~= '' and redis.call('HGET', KEYS[2], subscription)
          if holder and holder ~= id then
            redis.call('XACK', KEYS[1], ARGV[1], entry[1])
            redis.call('XDEL', KEYS[1], entry[1])
            redis.call('RPUSH', ARGV[4] .. 'held:' .. ARGV[5] .. ':' .. subscription, id)
          else
            if subscription and subscription ~= '' then
              redis.call('HSET', KEYS[2], subscription, id)
            end
            entries[#entries + 1] = entry
          end
        end
        return entries
        """)

    static let moveDue = RedisScript(source: """
        -- Entries whose retry is due, back into the stream (any instance may run this).
        -- KEYS[1] the delayed set, KEYS[2] the stream; ARGV[1] now (UNIX ms), ARGV[2] at most
        -- this many.
        local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
        for _, id in ipairs(due) do
          redis.call('XADD', KEYS[2], '*', 'id', id)
          redis.call('ZREM', KEYS[1], id)
        end
        return #due
        """)

    public init(client: RedisClient, keys: ClusterKeys = ClusterKeys(), destination: String, consumer: String) {
        self.client = client
        self.keys = keys
        self.destination = destination
        self.consumer = consumer
    }

    /// Creates the stream and the group when missing (an existing group is fine).
    public func prepare(completion: @escaping @Sendable (Result<Void, RedisError>) -> Void) {
        client.send(RESPCommand("XGROUP", "CREATE", keys.queue(destination), ClusterKeys.group, "0", "MKSTREAM")) { result in
            switch result {
            case .success(let reply) where reply.errorKind == nil || reply.errorKind == "BUSYGROUP": completion(.success(()))
            case .success(let reply): completion(.failure(RedisError(.protocolError, "XGROUP CREATE: \(reply.description)")))
            case .failure(let error): completion(.failure(error))
            }
        }
    }

    /// Up to `count` entries no consumer has had yet, now this consumer's (pending until
    /// finished or retried).
    public func read(count: Int, completion: @escaping @Sendable (Result<[Entry], RedisError>) -> Void) {
        let command = RESPCommand("XREADGROUP", "GROUP", ClusterKeys.group, consumer, "COUNT", String(count),
                                  "STREAMS", keys.queue(destination), ">")
        client.send(command) { result in
            completion(result.flatMap { reply in
                if let error = reply.errorKind {
                    // The group is gone (the stream was deleted by hand, say): make it again.
                    return .failure(RedisError(.protocolError, "XREADGROUP: \(error)"))
                }
                // [[stream, [[id, [field, value, ...]], ...]]], or nil when nothing is new.
                let entries = reply.elements?.first?.elements?.last?.elements ?? []
                return .success(entries.compactMap(Self.entry))
            })
        }
    }

    /// `read` for a destination with `order per-subscription`: only events whose turn it is
    /// come back; the others wait on the server behind their subscription's event.
    public func readInTurn(count: Int, completion: @escaping @Sendable (Result<[Entry], RedisError>) -> Void) {
        client.evaluate(ReadInTurnCall(queue: self, count: count)) { result in
            completion(result.flatMap { reply in
                if let error = reply.errorKind { return .failure(RedisError(.protocolError, "read in turn: \(error)")) }
                return .success((reply.elements ?? []).compactMap(Self.entry))
            })
        }
    }

    /// The stored record and the progress so far (nil for none) of each entry, in order.
    public func load(_ entries: [Entry], completion: @escaping @Sendable (Result<[(record: [UInt8]?, progress: [UInt8]?)], RedisError>) -> Void) {
        guard !entries.isEmpty else { return completion(.success([])) }
        let commands = entries.flatMap { entry in
            [RESPCommand("GET", keys.event(entry.eventId)), RESPCommand("HGET", keys.progress(destination), entry.eventId)]
        }
        client.send(commands) { results in
            var loaded: [(record: [UInt8]?, progress: [UInt8]?)] = []
            var index = 0
            while index + 1 < results.count {
                switch (results[index], results[index + 1]) {
                case (.success(let record), .success(let progress)):
                    loaded.append((record.bytes, progress.bytes))
                case (.failure(let error), _), (_, .failure(let error)):
                    return completion(.failure(error))
                }
                index += 2
            }
            completion(.success(loaded))
        }
    }

    /// Delivered or dead-lettered: acknowledged and deleted, the progress forgotten, the
    /// event's state updated; `false` when another instance had already finished it.
    public func finish(_ entry: Entry, _ outcome: Finish, completion: @escaping @Sendable (Result<Bool, RedisError>) -> Void) {
        evaluate(FinishCall(queue: self, entry: entry, outcome: outcome), completion: completion)
    }

    /// To be tried again at `due` (UNIX ms), with `progress` (the attempts so far) and the
    /// destination's `state` of the event; `false` when another instance finished it.
    public func retry(_ entry: Entry, due: Int64, progress: [UInt8], state: [UInt8],
                      completion: @escaping @Sendable (Result<Bool, RedisError>) -> Void) {
        evaluate(RetryCall(queue: self, entry: entry, due: due, progress: progress, state: state), completion: completion)
    }

    /// Moves up to `limit` retries due by `now` back into the stream; returns how many.
    public func moveDue(now: Int64, limit: Int = 100, completion: @escaping @Sendable (Result<Int, RedisError>) -> Void) {
        let call = MoveDueCall(delayed: keys.delayed(destination), stream: keys.queue(destination), now: now, limit: limit)
        client.evaluate(call) { result in
            completion(result.flatMap { reply in
                reply.errorKind == nil ? .success(Int(reply.integer ?? 0)) : .failure(RedisError(.protocolError, reply.description))
            })
        }
    }

    /// Takes over entries pending longer than `minimumIdle` on any consumer (a dead instance's
    /// attempts): `XAUTOCLAIM`, which also reports, and drops from the pending list, entries
    /// deleted while pending, however long they idled.
    public func claimIdle(minimumIdle: Duration, count: Int, completion: @escaping @Sendable (Result<Claimed, RedisError>) -> Void) {
        let command = RESPCommand("XAUTOCLAIM", keys.queue(destination), ClusterKeys.group, consumer,
                                  String(minimumIdle.wholeMilliseconds), "0-0", "COUNT", String(count))
        client.send(command) { result in
            completion(result.flatMap { reply in
                if let error = reply.errorKind { return .failure(RedisError(.protocolError, "XAUTOCLAIM: \(error)")) }
                // [next cursor, [[id, fields], ...], [deleted ids]] (Redis >= 7).
                let parts = reply.elements ?? []
                let entries = parts.count > 1 ? (parts[1].elements ?? []).compactMap(Self.entry) : []
                let lost = parts.count > 2 ? (parts[2].elements ?? []).compactMap(\.string) : []
                return .success(Claimed(entries: entries, lost: lost))
            })
        }
    }

    /// Keeps this consumer's claim on entries whose attempt is still running, so a long
    /// delivery is not taken over as idle (`XCLAIM ... JUSTID` resets their idle time).
    public func keepAlive(_ entries: [Entry], completion: @escaping @Sendable (Result<Void, RedisError>) -> Void) {
        guard !entries.isEmpty else { return completion(.success(())) }
        let command = RESPCommand("XCLAIM", [keys.queue(destination), ClusterKeys.group, consumer, "0"]
                                  + entries.map(\.streamId) + ["JUSTID"])
        client.send(command) { result in
            completion(result.flatMap { reply in
                reply.errorKind == nil ? .success(()) : .failure(RedisError(.protocolError, "XCLAIM: \(reply.description)"))
            })
        }
    }

    /// The queue's figures on the server: entries waiting in the stream (read or not),
    /// pending (read, unfinished), the oldest pending entry's age, delayed retries.
    public struct Figures: Sendable, Equatable {
        public var length = 0
        public var pending = 0
        public var oldestPendingAge: Duration?
        public var delayed = 0
    }

    public func figures(now: Int64, completion: @escaping @Sendable (Result<Figures, RedisError>) -> Void) {
        let commands = [
            RESPCommand("XLEN", keys.queue(destination)),
            RESPCommand("XPENDING", keys.queue(destination), ClusterKeys.group),
            RESPCommand("ZCARD", keys.delayed(destination)),
        ]
        client.send(commands) { results in
            var figures = Figures()
            for result in results {
                if case .failure(let error) = result { return completion(.failure(error)) }
            }
            figures.length = Int((try? results[0].get().integer) ?? 0)
            // XPENDING summary: [count, smallest id, greatest id, [[consumer, count], ...]].
            if let summary = try? results[1].get().elements, summary.count >= 2 {
                figures.pending = Int(summary[0].integer ?? 0)
                if let oldest = summary[1].string, let millis = Int64(oldest.prefix { $0 != "-" }) {
                    figures.oldestPendingAge = .milliseconds(max(0, now - millis))
                }
            }
            figures.delayed = Int((try? results[2].get().integer) ?? 0)
            completion(.success(figures))
        }
    }

    /// Runs a script that answers 1 when it changed the entry, 0 when another instance had.
    private func evaluate(_ call: some ScriptCall, completion: @escaping @Sendable (Result<Bool, RedisError>) -> Void) {
        client.evaluate(call) { result in
            completion(result.flatMap { reply in
                reply.errorKind == nil ? .success(reply.integer == 1) : .failure(RedisError(.protocolError, reply.description))
            })
        }
    }

    /// `[id, [field, value, ...]]` → an entry; one without an event id (no instance adds
    /// such an entry) has an empty `eventId`, so that the reader removes it and reports it.
    static func entry(_ value: RESPValue) -> Entry? {
        guard let parts = value.elements, parts.count == 2, let streamId = parts[0].string else { return nil }
        let fields = parts[1].elements ?? []
        var entry = Entry(streamId: streamId, eventId: "")
        var index = 0
        while index + 1 < fields.count {
            switch fields[index].string {
            case "id": entry.eventId = fields[index + 1].string ?? ""
            case "gap": entry.orderingGap = fields[index + 1].string
            default: break
            }
            index += 2
        }
        return entry
    }
}
