#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import StoreRelayCore

/// The durable dead-letter store: one JSON file per dead letter under `DATA/dead-letters`,
/// written atomically (temporary file, fsync, rename, directory fsync) before the delivery
/// that produced it is forgotten.
///
/// An in-memory index (id, event id, time, destination, reason) answers listings and finds
/// an event's letters; the files hold the
/// rest. File I/O runs on the store's own serial queue, never on a caller's.
public final class DeadLetterStore: DeadLetterArchive {
    /// Dead letters are the gateway's own (0600 in a 0700 directory): unlike a file queue,
    /// no consumer reads them, and they hold Apple's bodies. A failure is a `DeliveryError`
    /// naming the call, the file and errno.
    enum FilePolicy: FileIOPolicy {
        static let fileMode: mode_t = 0o600
        static let directoryMode: mode_t = 0o700
        static func failure(_ call: SystemCallFailure) -> DeliveryError { DeliveryError(call) }
    }
    typealias Files = POSIXFileIO<FilePolicy>

    typealias Entry = DeadLetterEntry

    public let directory: String
    private let index: Locked<Index>
    private let queue = DispatchQueue(label: "storerelay.dead-letters")
    private let logger: Logger

    /// The letters by id, and their ids by event id (an event has one letter per destination).
    private struct Index: Sendable {
        var letters: [String: Entry] = [:]
        var byEvent: [String: Set<String>] = [:]

        mutating func insert(_ entry: Entry) {
            letters[entry.id] = entry
            byEvent[entry.eventId, default: []].insert(entry.id)
        }

        mutating func remove(_ id: String) -> Entry? {
            guard let entry = letters.removeValue(forKey: id) else { return nil }
            byEvent[entry.eventId]?.remove(id)
            if byEvent[entry.eventId]?.isEmpty == true { byEvent[entry.eventId] = nil }
            return entry
        }
    }

    private init(directory: String, index: Index, logger: Logger) {
        self.directory = directory
        self.index = Locked(index)
        self.logger = logger
    }

    /// Opens (creating) the store and indexes every dead letter in it. Unreadable files are
    /// logged and left for an operator, never deleted.
    public static func open(directory: String, logger: Logger) throws(DeliveryError) -> DeadLetterStore {
        try Files.createDirectory(directory)
        try Files.requireDirectory(directory)
        // A directory made by an earlier version (0750) is closed to the group too; one owned
        // by someone else (a volume prepared by root) stays as it is, with a warning.
        do {
            try Files.setMode(directory, FilePolicy.directoryMode)
        } catch {
            logger.warning("dead-letters directory mode left as it is", [("path", directory), ("error", "\(error)")])
        }
        var index = Index()
        for name in try Files.listDirectory(directory) {
            let path = directory + "/" + name
            if name.hasSuffix(".tmp") { try? Files.removeFile(path); continue }
            guard name.hasSuffix(".json") else { continue }
            guard let data = try? Files.readAll(path),
                  let json = try? JSONValue.parse(data, maxDepth: StoredNotification.storedDepth), let letter = DeadLetter(json: json),
                  name == letter.id + ".json"
            else {
                logger.error("unreadable dead letter left in place", [("path", path)])
                continue
            }
            index.insert(Entry(letter))
        }
        return DeadLetterStore(directory: directory, index: index, logger: logger)
    }

    /// Writes `letter` durably (replacing one with the same id), then calls `completion`.
    public func write(_ letter: DeadLetter, completion: @escaping @Sendable (Result<Void, DeliveryError>) -> Void) {
        queue.async { [self] in
            do throws(DeliveryError) {
                try Files.replaceFileDurably(path(of: letter.id), letter.json.serializedBytes())
                index.withLock { $0.insert(Entry(letter)) }
                completion(.success(()))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// The dead letter `id`, or nil (also for ids that are not of our making).
    public func letter(id: String) -> DeadLetter? {
        guard Self.isValidID(id), index.withLock({ $0.letters[id] }) != nil,
              let data = try? Files.readAll(path(of: id)),
              let json = try? JSONValue.parse(data, maxDepth: StoredNotification.storedDepth)
        else { return nil }
        return DeadLetter(json: json)
    }

    /// Removes dead letter `id`; true when it existed.
    @discardableResult
    public func delete(id: String) -> Bool {
        guard Self.isValidID(id), index.withLock({ $0.remove(id) }) != nil else { return false }
        queue.sync {
            try? Files.removeFile(path(of: id))
            try? Files.syncDirectory(directory)  // best effort: the letter is gone from the index
        }
        return true
    }

    /// Dead letters newest first, filtered, at most `limit`, starting after `cursor` (an opaque
    /// string from a previous page); also the cursor of the next page, if any.
    public func list(destination: String? = nil, reason: DeadLetter.Reason? = nil, limit: Int = 100,
                     cursor: String? = nil) -> (items: [DeadLetter], nextCursor: String?) {
        list(DeadLetterQuery(destination: destination, reason: reason.map(DeadLetterReasonFilter.stored)), limit: limit, cursor: cursor)
    }

    /// Dead letters matching `query`, newest first, paged as above.
    public func list(_ query: DeadLetterQuery, limit: Int = 100, cursor: String? = nil) -> (items: [DeadLetter], nextCursor: String?) {
        let page = DeadLetterEntry.page(index.current.letters.values, query, limit: limit, cursor: cursor)
        return (page.entries.compactMap { letter(id: $0.id) }, page.nextCursor)
    }

    /// How many dead letters there are, by destination (`nil` key: unrouted and quarantined).
    public var countsByDestination: [String?: Int] {
        index.current.letters.values.reduce(into: [:]) { $0[$1.destination, default: 0] += 1 }
    }

    public var count: Int { index.current.letters.count }

    /// The dead letters of event `eventId`, one per destination that gave up on it.
    public func letters(forEvent eventId: String) -> [DeadLetter] {
        let ids = index.withLock { $0.byEvent[eventId] ?? [] }
        return ids.sorted().compactMap { letter(id: $0) }
    }

    /// Ids are `dl-` and 32 hex digits: anything else never reaches the file system.
    public static func isValidID(_ id: String) -> Bool {
        let bytes = Array(id.utf8)
        return bytes.count == 35 && id.hasPrefix("dl-")
            && bytes[3...].allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    private func path(of id: String) -> String { directory + "/" + id + ".json" }
}
