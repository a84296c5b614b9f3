import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// The dead letters of cluster mode, on the server every instance shares: the letters (JSON,
/// as single-node mode writes its files), an index of what listings filter by, and counts
/// per destination. Every instance's admin API, page and `dlq` CLI read the same ones.
///
/// Writes happen inside the delivery and acceptance scripts; this reads, and deletes. Calls
/// wait for the server (the admin listener's queue may block); an unreachable server reads
/// as no letters and a failed delete, and the admin's status shows the server down.
public final class ClusterDeadLetters: DeadLetterArchive {
    private let client: RedisClient
    private let keys: ClusterKeys

    static let delete = RedisScript(source: ClusterLua.finish + """
        -- Deletes one dead letter: ARGV[1] the prefix, ARGV[2] the letter id.
        return dropLetter(ARGV[1], ARGV[2])
        """)

    public init(client: RedisClient, keys: ClusterKeys = ClusterKeys()) {
        self.client = client
        self.keys = keys
    }

    public func letter(id: String) -> DeadLetter? {
        guard DeadLetterStore.isValidID(id), let bytes = client.waitForReply(RESPCommand("HGET", keys.letters, id))?.bytes,
              let json = try? JSONValue.parse(bytes, maxDepth: StoredNotification.storedDepth)
        else { return nil }
        return DeadLetter(json: json)
    }

    @discardableResult
    public func delete(id: String) -> Bool {
        guard DeadLetterStore.isValidID(id) else { return false }
        let reply = client.waitForScript(Self.delete, keys: [keys.letters, keys.letterIndex, keys.letterCounts],
                                         arguments: [Array(ClusterKeys.prefix.utf8), Array(id.utf8)])
        return reply?.integer == 1
    }

    /// Reads the whole index (a few hundred bytes a letter), filters and sorts it as the
    /// file store does, then fetches the page's letters.
    public func list(_ query: DeadLetterQuery, limit: Int, cursor: String?) -> (items: [DeadLetter], nextCursor: String?) {
        let page = DeadLetterEntry.page(entries(), query, limit: limit, cursor: cursor)
        return (letters(page.entries.map(\.id)), page.nextCursor)
    }

    public var countsByDestination: [String?: Int] {
        let pairs = client.waitForReply(RESPCommand("HGETALL", keys.letterCounts))?.elements ?? []
        var counts: [String?: Int] = [:]
        var index = 0
        while index + 1 < pairs.count {
            if let name = pairs[index].string, let count = pairs[index + 1].integer, count > 0 {
                counts[name.isEmpty ? nil : name] = Int(count)
            }
            index += 2
        }
        return counts
    }

    public func letters(forEvent eventId: String) -> [DeadLetter] {
        letters(entries().filter { $0.eventId == eventId }.map(\.id).sorted())
    }

    private func entries() -> [DeadLetterEntry] {
        let values = client.waitForReply(RESPCommand("HVALS", keys.letterIndex))?.elements ?? []
        return values.compactMap { value in value.bytes.flatMap { try? JSONValue.parse($0) }.flatMap(DeadLetterEntry.init(json:)) }
    }

    private func letters(_ ids: [String]) -> [DeadLetter] {
        guard !ids.isEmpty else { return [] }
        let values = client.waitForReply(RESPCommand("HMGET", [keys.letters] + ids))?.elements ?? []
        return values.compactMap { value in
            value.bytes.flatMap { try? JSONValue.parse($0, maxDepth: StoredNotification.storedDepth) }.flatMap(DeadLetter.init(json:))
        }
    }
}
