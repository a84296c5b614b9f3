import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore

/// The dead letters of cluster mode, on the server every instance shares: the letters (JSON,
/// as single-node mode writes its files), an index of what listings filter by, and counts
/// per destination. Every instance's admin API, page and `dlq` CLI read the same ones.
///
/// Writes happen inside the delivery and acceptance scripts; this reads, and deletes. Calls
/// suspend until the server answers (`RedisClient+Async`); an unreachable server reads as
/// no letters and a failed delete, and the admin's status shows the server down.
///
/// A letter that fails its `cluster-key` check reads as a `tampered` letter under its id
/// that holds nothing of what the server had: listed, so an operator sees it, and not
/// replayed as it is. The first replay that meets it moves the bytes aside
/// (`tampered-letters`) rather than discarding them: sealed with a key this instance lacks
/// (a key rotation), or unsealed after `unsealed` was dropped, they are often the only copy
/// of an acknowledged notification, and a replay once the keys are right takes them up again.
public final class ClusterDeadLetters: DeadLetterArchive {
    private let client: RedisClient
    private let keys: ClusterKeys
    let seal: ClusterSeal
    /// The counts as last read, for `/metrics` (which renders synchronously).
    private let lastCounts = Locked<[String?: Int]>([:])

    static let delete = RedisScript(source: ClusterLua.finish + """
        -- Deletes one dead letter: ARGV[1] the prefix, ARGV[2] the letter id.
        return dropLetter(ARGV[1], ARGV[2])
        """)

    /// `delete`'s input. The keys are those the script touches, for a server to route by.
    struct DeleteCall: ScriptCall {
        static var script: RedisScript { ClusterDeadLetters.delete }

        var letters: String
        var letterIndex: String
        var letterCounts: String
        var prefix = ClusterKeys.prefix
        var id: String

        init(keys: ClusterKeys, id: String) {
            letters = keys.letters
            letterIndex = keys.letterIndex
            letterCounts = keys.letterCounts
            self.id = id
        }

        var keys: [String] { [letters, letterIndex, letterCounts] }
        var arguments: [[UInt8]] { [ScriptArgument.text(prefix), ScriptArgument.text(id)] }
    }

    static let setAside = RedisScript(source: ClusterLua.finish + """
        -- A dead letter that failed its check, moved aside and a tampered one sealed in its
        -- place, only if it is still stored as read (a letter written under the id since
        -- stays): ARGV[1] the prefix, ARGV[2] the letter id, ARGV[3] the letter as read,
        -- ARGV[4] the tampered letter, ARGV[5] its index entry, ARGV[6] the destination it is
        -- counted under.
        if redis.call('HGET', ARGV[1] .. 'letters', ARGV[2]) ~= ARGV[3] then
          return 'changed'
        end
        redis.call('HSET', ARGV[1] .. 'tampered-letters', ARGV[2], ARGV[3])
        keepLetter(ARGV[1], ARGV[2], ARGV[4], ARGV[5], ARGV[6])
        return 'kept'
        """)

    /// `setAside`'s input. The keys are those the script touches, for a server to route by.
    struct SetAsideCall: ScriptCall {
        static var script: RedisScript { ClusterDeadLetters.setAside }

        var letters: String
        var letterIndex: String
        var letterCounts: String
        var tamperedLetters: String
        var prefix = ClusterKeys.prefix
        var id: String
        /// The letter as read: it is set aside only while still stored so.
        var read: [UInt8]
        /// The `tampered` letter, sealed, and its index entry.
        var stub: [UInt8]
        var stubEntry: [UInt8]
        /// Where it is counted (nil: not routed).
        var destination: String?

        var keys: [String] { [letters, letterIndex, letterCounts, tamperedLetters] }

        var arguments: [[UInt8]] {
            [ScriptArgument.text(prefix), ScriptArgument.text(id), read, stub, stubEntry, ScriptArgument.text(destination)]
        }
    }

    /// Index entries asked for per `HSCAN` step (a hint to the server; it may answer more).
    let indexScanCount: Int

    public init(client: RedisClient, keys: ClusterKeys = ClusterKeys(), seal: ClusterSeal = .off, indexScanCount: Int = 1000) {
        self.indexScanCount = indexScanCount
        self.client = client
        self.keys = keys
        self.seal = seal
    }

    public func letter(id: String) async -> DeadLetter? {
        await stored(id: id)?.letter
    }

    /// The letter `id` and its bytes exactly as the server holds them (seal included): a
    /// replay's script compares them, so a letter removed or changed since it was read (its
    /// replay delivered meanwhile, say) is not replayed again.
    func stored(id: String) async -> (letter: DeadLetter, bytes: [UInt8])? {
        guard DeadLetterStore.isValidID(id), let bytes = await client.reply(RESPCommand("HGET", keys.letters, id))?.bytes,
              let letter = decode(id: id, bytes)
        else { return nil }
        return (letter, bytes)
    }

    /// What `setAside` did.
    enum SetAside: Equatable {
        /// Moved aside, `tampered` in its place.
        case kept
        /// No longer stored as read: nothing changed.
        case changed
        /// The server did not answer.
        case failed

        /// The script's answer (nil: none).
        init(reply: RESPValue?) {
            switch reply?.string {
            case "kept": self = .kept
            case "changed": self = .changed
            default: self = .failed
            }
        }
    }

    /// Moves the letter stored as `read` aside (`tampered-letters`) and writes `stub` (a
    /// `tampered` letter, sealed) in its place: only while it is still stored as read, so a
    /// letter written under the id since is never overwritten.
    func setAside(_ stub: DeadLetter, read: [UInt8]) async -> SetAside {
        let call = SetAsideCall(
            letters: keys.letters, letterIndex: keys.letterIndex, letterCounts: keys.letterCounts, tamperedLetters: keys.tamperedLetters,
            id: stub.id, read: read, stub: seal.seal(stub.json.serializedBytes(), .letter, stub.id),
            stubEntry: DeadLetterEntry(stub).json.serializedBytes(), destination: stub.destination)
        return await SetAside(reply: client.script(call))
    }

    /// What the `tampered` letter `id` stands in for, as the server keeps it aside: the
    /// letter as it was, the event record and the progress a delivery could not open.
    func aside(id: String) async -> (letter: [UInt8]?, event: [UInt8]?, progress: [UInt8]?) {
        let values = await client.reply(RESPCommand("HMGET", keys.tamperedLetters, id, id + ":event", id + ":progress"))?.elements ?? []
        guard values.count == 3 else { return (nil, nil, nil) }
        return (values[0].bytes, values[1].bytes, values[2].bytes)
    }

    /// The letter `id` in `stored` bytes when it checks out (nil otherwise).
    func intact(id: String, _ stored: [UInt8]) -> DeadLetter? {
        guard case .intact(let bytes) = seal.open(stored, .letter, id) else { return nil }
        return Self.parse(bytes)
    }

    private static func parse(_ bytes: [UInt8]) -> DeadLetter? {
        (try? JSONValue.parse(bytes, maxDepth: StoredNotification.storedDepth)).flatMap(DeadLetter.init(json:))
    }

    /// One stored letter, checked; one that fails reads as `tampered` (what it claims is
    /// kept out, but the event id and destination it names, for the operator to look up).
    func decode(id: String, _ stored: [UInt8]) -> DeadLetter? {
        switch seal.open(stored, .letter, id) {
        case .intact(let bytes):
            return Self.parse(bytes)
        case let failed:
            let claimed = try? JSONValue.parse(Array(stored.drop { $0 != UInt8(ascii: "{") }), maxDepth: StoredNotification.storedDepth)
            let eventId = claimed?["eventId"]?.stringValue.flatMap(Self.plausibleName) ?? "unknown"
            let destination = claimed?["destination"]?.stringValue.flatMap(Self.plausibleName)
            return DeadLetter(tamperedEventId: eventId, destination: destination,
                              detail: "this dead letter failed its cluster-key check (\(failed.failure ?? "")): written or changed "
                                  + "on the server by something other than an instance, or sealed with a key this instance lacks; "
                                  + "a replay keeps it aside, and delivers it once it checks out",
                              createdAt: .now(), letterId: id)
        }
    }

    /// What a tampered letter claims, shown only when it looks like an id or a name.
    private static func plausibleName(_ text: String) -> String? {
        text.count <= 64 && !text.isEmpty && text.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || "-_.".unicodeScalars.contains($0)) }
            ? text : nil
    }

    @discardableResult
    public func delete(id: String) async -> Bool {
        guard DeadLetterStore.isValidID(id) else { return false }
        return await client.script(DeleteCall(keys: keys, id: id))?.integer == 1
    }

    /// Scans the index (a few hundred bytes a letter) a batch at a time, keeping only the
    /// page as the file store orders it, then fetches the page's letters and keeps those
    /// that, as read, match the query too: the index is not sealed.
    public func list(_ query: DeadLetterQuery, limit: Int, cursor: String?) async -> (items: [DeadLetter], nextCursor: String?) {
        var collector = DeadLetterEntry.PageCollector(query, limit: limit, cursor: cursor)
        await scanIndex { collector.consider($0) }
        let page = collector.page
        let createdAt = Dictionary(page.entries.map { ($0.id, $0.createdAt) }, uniquingKeysWith: { first, _ in first })
        let items = await letters(page.entries.map(\.id)).filter { query.admits($0, createdAt: createdAt[$0.id]) }
        return (items, page.nextCursor)
    }

    public var countsByDestination: [String?: Int] {
        get async {
            guard let pairs = await client.reply(RESPCommand("HGETALL", keys.letterCounts))?.elements else { return [:] }
            let counts = Self.counts(pairs)
            lastCounts.withLock { $0 = counts }
            return counts
        }
    }

    /// `countsByDestination` as last read (empty until read, and kept while the server does
    /// not answer).
    public var lastCountsByDestination: [String?: Int] { lastCounts.current }

    private static func counts(_ pairs: [RESPValue]) -> [String?: Int] {
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

    /// The letters the index says are of `eventId`, kept only if they are, as read.
    public func letters(forEvent eventId: String) async -> [DeadLetter] {
        var ids: [String] = []
        await scanIndex { batch in ids += batch.filter { $0.eventId == eventId }.map(\.id) }
        return await letters(ids.sorted()).filter { letter in
            letter.eventId == eventId && (letter.notification.map { $0.id == eventId } ?? true)
        }
    }


    /// Hands `visit` the whole index a batch at a time (`HSCAN`): one reply per batch, so
    /// neither the server's reply nor this instance's memory grows with the number of letters
    /// (one `HVALS` of a few hundred thousand letters outgrew the client's reply limit). A
    /// letter written or deleted during the scan may be seen or not; none present throughout
    /// is missed. A scan the server breaks off ends with what was seen.
    private func scanIndex(_ visit: ([DeadLetterEntry]) -> Void) async {
        var cursor = "0"
        repeat {
            guard let reply = await client.reply(RESPCommand("HSCAN", keys.letterIndex, cursor, "COUNT", String(indexScanCount))),
                  reply.errorKind == nil, let parts = reply.elements, parts.count == 2, let next = parts[0].string else { return }
            let fields = parts[1].elements ?? []
            // [field, value, field, value, ...]: the values are the entries.
            visit(stride(from: 1, to: fields.count, by: 2).compactMap { index in
                fields[index].bytes.flatMap { try? JSONValue.parse($0) }.flatMap(DeadLetterEntry.init(json:))
            })
            cursor = next
        } while cursor != "0"
    }

    private func letters(_ ids: [String]) async -> [DeadLetter] {
        guard !ids.isEmpty else { return [] }
        let values = await client.reply(RESPCommand("HMGET", [keys.letters] + ids))?.elements ?? []
        return zip(ids, values).compactMap { id, value in value.bytes.flatMap { decode(id: id, $0) } }
    }
}
