#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayStorage
import StoreRelayCore

/// One destination's place in the journal: a position and a bounded window, never a list
/// of its backlog. Every event routed to it before `cursor` was taken: finished, or in
/// `unfinished` with its attempts and next due time. Events from `cursor` on wait in the
/// journal, read when the destination has room (Kafka's consumer offset, with the window
/// of out-of-order work next to it).
struct DestinationBook: Sendable, Equatable {
    var cursor: RecordPosition
    /// Taken and not finished (waiting, in flight, retrying): at most the queue's window.
    var unfinished: [RecordPosition: ParkedJob] = [:]
    /// Events routed here at or after `cursor`, as far as this process counted them (a
    /// gauge for status; the journal is what holds them).
    var backlog = 0
    /// What the start-up replay of the journal's tail found for events not yet taken again:
    /// applied as they are (a finished one is skipped). Bounded by the tail, and saved with
    /// the book until those events are read (a later tail starts after the records).
    var replayed: [RecordPosition: DestinationProgress] = [:]

    /// The oldest position this destination still needs.
    var oldestNeeded: RecordPosition { unfinished.keys.min().map { Swift.min($0, cursor) } ?? cursor }

}

/// Unrouted, quarantined and no-longer-configured events get their dead letter when they
/// are submitted; these are the ones whose letter is not written yet.
struct RouterBook: Sendable, Equatable {
    /// Letters still to write, by event position.
    var pending: [RecordPosition: Int] = [:]
    /// Just after the last event submitted.
    var reached: RecordPosition
    /// Where the start-up scan for missing letters is, while it runs.
    var scanning: RecordPosition?

    var oldestNeeded: RecordPosition {
        [pending.keys.min(), scanning].compactMap { $0 }.reduce(reached, Swift.min)
    }
}

/// Everything the engine must checkpoint: the router's book, and each destination's keeper
/// (its queue writes it; a checkpoint takes a snapshot of each).
struct DeliveryBooks: Sendable {
    var destinations: [String: BookKeeper] = [:]
    var router: RouterBook
    /// Letters the start-up replay found written (destination "" or a removed one), by event
    /// position: the start-up scan does not write them again. Bounded by the tail.
    var lettersWritten: Set<RecordPosition> = []
    /// The last checkpoint written.
    var saved: DeliveryCheckpoint?
    /// Set by `resume`: until then nothing is checkpointed or retired.
    var resumed = false
    var stopping = false

    /// The checkpoint of these books, for a journal whose end is `journal` (read before this
    /// is called: every book already holds what the records before it report).
    func checkpoint(journal: RecordPosition) -> DeliveryCheckpoint {
        DeliveryCheckpoint(journal: journal, router: router.oldestNeeded, destinations: destinations.mapValues(\.snapshot))
    }

    /// The keeper of destination `name`, made with a book starting at `cursor` if it has none.
    mutating func keeper(of name: String, startingAt cursor: RecordPosition) -> BookKeeper {
        if let keeper = destinations[name] { return keeper }
        let keeper = BookKeeper(DestinationBook(cursor: cursor))
        destinations[name] = keeper
        return keeper
    }
}

/// Where delivery stands, written about once a second to `delivery-checkpoint` in the journal
/// directory, so a start reads this and the journal's short tail instead of every segment.
///
/// `journal` is the journal's end when the books were copied: every progress record before
/// it is reflected in them, and those after it are replayed at start (idempotently: a
/// record may be reflected already). Decisions enter the books before their progress record
/// is appended, which is what makes that true.
struct DeliveryCheckpoint: Sendable, Equatable {
    static let fileName = "delivery-checkpoint"

    var journal: RecordPosition
    var router: RecordPosition
    var destinations: [String: DestinationBook]

    func encoded() -> [UInt8] {
        var books: [(String, JSONValue)] = []
        for (name, book) in destinations.sorted(by: { $0.key < $1.key }) {
            books.append((name, [
                "cursor": book.cursor.json,
                "backlog": .integer(Int64(book.backlog)),
                "unfinished": .array(book.unfinished.values.sorted { $0.position < $1.position }.map(\.json)),
                "replayed": .array(book.replayed.sorted { $0.key < $1.key }.map { position, progress in
                    ["p": position.json, "a": .array(progress.attempts.map(\.progressJSON)),
                     "next": .integer(progress.nextAttempt?.milliseconds), "done": .bool(progress.finished)]
                }),
            ]))
        }
        let json: JSONValue = [
            "version": 1, "journal": journal.json, "router": router.json, "destinations": .object(JSONObject(books.map { (key: $0.0, value: $0.1) })),
        ]
        return json.serializedBytes()
    }

    init(journal: RecordPosition, router: RecordPosition, destinations: [String: DestinationBook]) {
        self.journal = journal
        self.router = router
        self.destinations = destinations
    }

    init?(decoding bytes: [UInt8]) {
        guard let json = try? JSONValue.parse(bytes), json["version"]?.int64Value == 1,
              let journal = json["journal"].flatMap(RecordPosition.init(json:)),
              let router = json["router"].flatMap(RecordPosition.init(json:)),
              case .object(let members)? = json["destinations"] else { return nil }
        var destinations: [String: DestinationBook] = [:]
        for (name, value) in members.members {
            guard let cursor = value["cursor"].flatMap(RecordPosition.init(json:)),
                  case .array(let jobs)? = value["unfinished"] else { return nil }
            var book = DestinationBook(cursor: cursor, backlog: Int(value["backlog"]?.int64Value ?? 0))
            for job in jobs {
                guard let parked = ParkedJob(json: job, destination: name) else { return nil }
                book.unfinished[parked.position] = parked
            }
            if case .array(let replayed)? = value["replayed"] {
                for entry in replayed {
                    guard let position = entry["p"].flatMap(RecordPosition.init(json:)), case .array(let attempts)? = entry["a"]
                    else { return nil }
                    let decoded = attempts.compactMap(DeliveryAttempt.init(progressJSON:))
                    guard decoded.count == attempts.count else { return nil }
                    book.replayed[position] = DestinationProgress(
                        attempts: decoded, nextAttempt: entry["next"]?.int64Value.map(Timestamp.init(milliseconds:)),
                        finished: entry["done"]?.boolValue ?? false)
                }
            }
            destinations[name] = book
        }
        self.init(journal: journal, router: router, destinations: destinations)
    }
}

extension RecordPosition {
    /// `[segment, offset]`.
    var json: JSONValue { [.integer(Int64(segment)), .integer(Int64(offset))] }

    init?(json: JSONValue) {
        guard case .array(let parts) = json, parts.count == 2,
              let segment = parts[0].int64Value, segment >= 0, let offset = parts[1].int64Value, offset >= 0 else { return nil }
        self.init(segment: UInt64(segment), offset: Int(offset))
    }

    /// Just after the record at this position: every record before the result is at or
    /// before this one.
    var next: RecordPosition { RecordPosition(segment: segment, offset: offset + 1) }
}

extension ParkedJob {
    var json: JSONValue {
        var fields: [JSONObject.Member] = [
            ("p", position.json), ("e", .string(eventId)), ("a", .array(attempts.map(\.progressJSON))),
            ("due", .integer(due.milliseconds)), ("budget", .integer(budgetStart.milliseconds)),
            ("before", .integer(Int64(attemptsBeforeBudget))),
        ]
        if let subscription { fields.append(("s", .string(subscription))) }
        if let orderingGap { fields.append(("gap", .string(orderingGap))) }
        return .object(JSONObject(fields))
    }

    init?(json: JSONValue, destination: String) {
        guard let position = json["p"].flatMap(RecordPosition.init(json:)), let eventId = json["e"]?.stringValue,
              case .array(let attempts)? = json["a"], let due = json["due"]?.int64Value,
              let budget = json["budget"]?.int64Value else { return nil }
        let decoded = attempts.compactMap(DeliveryAttempt.init(progressJSON:))
        guard decoded.count == attempts.count else { return nil }
        self.init(eventId: eventId, destination: destination, position: position, attempts: decoded,
                  due: Timestamp(milliseconds: due), attemptsBeforeBudget: Int(json["before"]?.int64Value ?? 0),
                  budgetStart: Timestamp(milliseconds: budget))
        subscription = json["s"]?.stringValue
        orderingGap = json["gap"]?.stringValue
    }
}

/// Reads and replaces the checkpoint file. Replaced whole through a rename (and the
/// directory synced), so a crash while writing it leaves the previous one.
struct CheckpointFile: Sendable {
    let path: String
    let directory: String
    /// Test seam for crash tests (`GatewayTestHooks`): a pause between writing the new
    /// checkpoint and renaming it into place, the moment a `kill -9` must not harm.
    let pauseBeforeRename: Duration?

    init(directory: String, pauseBeforeRename: Duration? = nil) {
        self.directory = directory
        self.pauseBeforeRename = pauseBeforeRename
        path = directory + "/" + DeliveryCheckpoint.fileName
    }

    enum Loaded { case none, checkpoint(DeliveryCheckpoint), unreadable(String) }

    func load() -> Loaded {
        guard Files.isRegularFile(path) else { return .none }
        do {
            let bytes = try Files.readAll(path)
            guard let checkpoint = DeliveryCheckpoint(decoding: bytes) else { return .unreadable("not a checkpoint this version reads") }
            return .checkpoint(checkpoint)
        } catch {
            return .unreadable("\(error)")
        }
    }

    func save(_ checkpoint: DeliveryCheckpoint) throws(DeliveryError) {
        let temporary = path + ".tmp"
        try Files.writeFile(temporary, checkpoint.encoded())
        if let pauseBeforeRename { usleep(UInt32(pauseBeforeRename.wholeMilliseconds * 1000)) }
        try Files.renameFile(temporary, path)
        try Files.syncDirectory(directory)
    }

    private typealias Files = ReplayIntentStore.Files
}
