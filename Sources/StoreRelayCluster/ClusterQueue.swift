import StoreRelayNet
import StoreRelayCore

/// One destination's queue on the server, as every instance shares it (docs/SPEC.md
/// "Cluster mode", Delivery): a stream read through one consumer group, each instance a
/// consumer; a delayed sorted set for retries, moved back by any instance; idle entries of a
/// dead instance claimed by the others.
///
/// Every step that changes more than one key is one script, so a crash between two commands
/// can neither lose an entry nor leave it in two places.
public final class ClusterQueue: Sendable {
    /// One event to deliver: its stream entry, its id and the attempts it has had.
    public struct Entry: Sendable, Equatable {
        public var streamId: String
        public var eventId: String
        public var attempts: Int
    }

    /// What `claimIdle` took over, and the entries it found deleted while pending: each is an
    /// event acknowledged to Apple that no instance can deliver any more.
    public struct Claimed: Sendable, Equatable {
        public var entries: [Entry]
        public var lost: [String]
    }

    public let destination: String
    public let consumer: String
    private let client: RedisClient
    private let keys: ClusterKeys

    static let complete = RedisScript(source: """
        -- Done with one entry (delivered, or dead-lettered): KEYS[1] the stream, KEYS[2] the
        -- attempts hash; ARGV[1] the group, ARGV[2] the entry, ARGV[3] the event id.
        redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
        redis.call('XDEL', KEYS[1], ARGV[2])
        redis.call('HDEL', KEYS[2], ARGV[3])
        return 1
        """)

    static let retry = RedisScript(source: """
        -- One entry to try again later: out of the stream, into the delayed set at its due
        -- time, its attempts counted. KEYS[1] the stream, KEYS[2] the delayed set, KEYS[3] the
        -- attempts hash; ARGV[1] the group, ARGV[2] the entry, ARGV[3] the event id,
        -- ARGV[4] the due time (UNIX ms), ARGV[5] the attempts so far.
        redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
        redis.call('HSET', KEYS[3], ARGV[3], ARGV[5])
        redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
        redis.call('XDEL', KEYS[1], ARGV[2])
        return 1
        """)

    static let moveDue = RedisScript(source: """
        -- Entries whose retry is due, back into the stream (any instance may run this).
        -- KEYS[1] the delayed set, KEYS[2] the stream, KEYS[3] the attempts hash;
        -- ARGV[1] now (UNIX ms), ARGV[2] at most this many.
        local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[2]))
        for _, id in ipairs(due) do
          local attempts = redis.call('HGET', KEYS[3], id) or '0'
          redis.call('XADD', KEYS[2], '*', 'id', id, 'reason', '', 'attempts', attempts)
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
    /// completed or retried).
    public func read(count: Int, completion: @escaping @Sendable (Result<[Entry], RedisError>) -> Void) {
        let command = RESPCommand("XREADGROUP", "GROUP", ClusterKeys.group, consumer, "COUNT", String(count),
                                  "STREAMS", keys.queue(destination), ">")
        client.send(command) { result in
            completion(result.flatMap { reply in
                if let error = reply.errorKind { return .failure(RedisError(.protocolError, "XREADGROUP: \(error)")) }
                // [[stream, [[id, [field, value, ...]], ...]]], or nil when nothing is new.
                let entries = reply.elements?.first?.elements?.last?.elements ?? []
                return .success(entries.compactMap(Self.entry))
            })
        }
    }

    /// Delivered or dead-lettered: acknowledged and deleted, its attempt count forgotten.
    public func complete(_ entry: Entry, completion: @escaping @Sendable (Result<Void, RedisError>) -> Void) {
        evaluate(Self.complete, keys: [keys.queue(destination), keys.attempts(destination)],
                 arguments: [ClusterKeys.group, entry.streamId, entry.eventId], completion: completion)
    }

    /// To be tried again at `due` (UNIX ms), after `attempts` attempts.
    public func retry(_ entry: Entry, due: Int64, attempts: Int, completion: @escaping @Sendable (Result<Void, RedisError>) -> Void) {
        evaluate(Self.retry, keys: [keys.queue(destination), keys.delayed(destination), keys.attempts(destination)],
                 arguments: [ClusterKeys.group, entry.streamId, entry.eventId, String(due), String(attempts)], completion: completion)
    }

    /// Moves up to `limit` retries due by `now` back into the stream; returns how many.
    public func moveDue(now: Int64, limit: Int = 100, completion: @escaping @Sendable (Result<Int, RedisError>) -> Void) {
        client.evaluate(Self.moveDue, keys: [keys.delayed(destination), keys.queue(destination), keys.attempts(destination)],
                        arguments: [Array(String(now).utf8), Array(String(limit).utf8)]) { result in
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

    private func evaluate(
        _ script: RedisScript, keys: [String], arguments: [String], completion: @escaping @Sendable (Result<Void, RedisError>) -> Void
    ) {
        client.evaluate(script, keys: keys, arguments: arguments.map { Array($0.utf8) }) { result in
            completion(result.flatMap { reply in
                reply.errorKind == nil ? .success(()) : .failure(RedisError(.protocolError, reply.description))
            })
        }
    }

    /// `[id, [field, value, ...]]` → an entry; nil for one without an event id.
    static func entry(_ value: RESPValue) -> Entry? {
        guard let parts = value.elements, parts.count == 2, let streamId = parts[0].string, let fields = parts[1].elements else {
            return nil
        }
        var map: [String: String] = [:]
        var index = 0
        while index + 1 < fields.count {
            if let key = fields[index].string, let value = fields[index + 1].string { map[key] = value }
            index += 2
        }
        guard let eventId = map["id"], !eventId.isEmpty else { return nil }
        return Entry(streamId: streamId, eventId: eventId, attempts: Int(map["attempts"] ?? "0") ?? 0)
    }
}
