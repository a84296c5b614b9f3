import Dispatch
import StoreRelayNet
import StoreRelayCore

/// The `unsealed` phase of turning `cluster-key` on (docs/SPEC.md "Cluster mode", Integrity):
/// records written before the key count as intact only while `unsealed` is set, and a dead
/// letter may wait for months; met after the word is dropped, it would fail. So an instance
/// with `unsealed` seals them in place, at start and every `interval` after: every dead
/// letter, and the event record and progress of every event in a destination's stream or
/// delayed set. Each is written only over the bytes read (one script), so a record changed
/// meanwhile is left to the next pass. A timer on a queue of its own starts each pass as a
/// task, which suspends while the server answers; a pass still running skips the next tick.
final class ClusterResealer: Sendable {
    static let interval: Duration = .seconds(300)
    /// Entries, letters and records asked for at a time.
    private static let batch = 200

    static let reseal = RedisScript(source: """
        -- A record sealed in place, only if it is still stored as read. KEYS[1] the key;
        -- ARGV[1] the hash field ('' for a string key), ARGV[2] the record as read, ARGV[3]
        -- the record sealed.
        if ARGV[1] == '' then
          if redis.call('GET', KEYS[1]) ~= ARGV[2] then
            return 0
          end
          redis.call('SET', KEYS[1], ARGV[3], 'KEEPTTL')
        else
          if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then
            return 0
          end
          redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
        end
        return 1
        """)

    /// `reseal`'s input.
    struct ResealCall: ScriptCall {
        static var script: RedisScript { ClusterResealer.reseal }

        var key: String
        /// The hash field (nil: `key` is a string).
        var field: String?
        var read: [UInt8]
        var sealed: [UInt8]

        var keys: [String] { [key] }
        var arguments: [[UInt8]] { [ScriptArgument.text(field), read, sealed] }
    }

    private let client: RedisClient
    private let keys = ClusterKeys()
    private let seal: ClusterSeal
    private let destinations: @Sendable () -> [String]
    private let logger: Logger
    private let queue = DispatchQueue(label: "storerelay.cluster.reseal")
    private let timer = RepeatingTimer()
    /// Whether a pass is running.
    private let passing = Locked(false)

    /// - Parameter destinations: the destinations whose queues to look through, asked at
    ///   each pass (a reload may change them).
    init(client: RedisClient, seal: ClusterSeal, destinations: @escaping @Sendable () -> [String], logger: Logger) {
        self.client = client
        self.seal = seal
        self.destinations = destinations
        self.logger = logger
    }

    /// Passes at once and every `interval`, while `unsealed` is set.
    func start(interval: Duration = ClusterResealer.interval) {
        guard seal.isAcceptingUnsealed else { return }
        timer.start(every: interval, leeway: .seconds(1), on: queue) { [weak self] in
            guard let self, client.isConnected else { return }
            let idle = passing.withLock { running in
                defer { running = true }
                return !running
            }
            guard idle else { return }
            Task {
                await self.pass()
                self.passing.withLock { $0 = false }
            }
        }
    }

    func stop() { timer.stop() }

    /// One pass; how many records it sealed.
    @discardableResult
    func pass() async -> Int {
        var sealed = await letters()
        for destination in destinations() {
            sealed += await records(of: destination)
        }
        if sealed > 0 {
            logger.notice("cluster records written before cluster-key sealed in place", [("records", sealed)])
        }
        return sealed
    }

    private func letters() async -> Int {
        var sealed = 0
        var cursor = "0"
        repeat {
            guard let reply = await client.reply(RESPCommand("HSCAN", keys.letters, cursor, "COUNT", String(Self.batch))),
                  let parts = reply.elements, parts.count == 2, let next = parts[0].string
            else { return sealed }
            let pairs = parts[1].elements ?? []
            var index = 0
            while index + 1 < pairs.count {
                if let id = pairs[index].string, let stored = pairs[index + 1].bytes,
                   let resealed = seal.resealed(stored, .letter, [id]), await reseal(keys.letters, field: id, stored, resealed) {
                    sealed += 1
                }
                index += 2
            }
            cursor = next
        } while cursor != "0"
        return sealed
    }

    /// The event records and progress of every event waiting on `destination`.
    private func records(of destination: String) async -> Int {
        var ids = await Set((client.reply(RESPCommand("ZRANGE", keys.delayed(destination), "0", "-1"))?.elements ?? []).compactMap(\.string))
        var start = "-"
        while let page = await client.reply(RESPCommand("XRANGE", keys.queue(destination), start, "+", "COUNT", String(Self.batch)))?.elements,
              !page.isEmpty {
            let entries = page.compactMap(ClusterQueue.entry)
            ids.formUnion(entries.map(\.eventId).filter { !$0.isEmpty })
            guard page.count == Self.batch, let last = entries.last else { break }
            start = "(" + last.streamId
        }
        var sealed = 0
        for id in ids.sorted() {
            let replies = await client.replies([RESPCommand("GET", keys.event(id)), RESPCommand("HGET", keys.progress(destination), id)])
            if replies.count == 2, case .success(let record) = replies[0], let stored = record.bytes,
               let resealed = seal.resealed(stored, .event, [id]), await reseal(keys.event(id), field: nil, stored, resealed) {
                sealed += 1
            }
            if replies.count == 2, case .success(let progress) = replies[1], let stored = progress.bytes,
               let resealed = seal.resealed(stored, .progress, [destination, id]),
               await reseal(keys.progress(destination), field: id, stored, resealed) {
                sealed += 1
            }
        }
        return sealed
    }

    private func reseal(_ key: String, field: String?, _ read: [UInt8], _ sealed: [UInt8]) async -> Bool {
        await client.script(ResealCall(key: key, field: field, read: read, sealed: sealed))?.integer == 1
    }
}
