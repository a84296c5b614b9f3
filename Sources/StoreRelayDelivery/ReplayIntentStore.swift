#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCrypto
import StoreRelayCore

/// Bulk replays, recorded before they start: `DATA/replays/<id>.json` (0600) lists the dead
/// letters a "replay all" took, and stays until each of them has been replayed (delivered, or
/// dead-lettered again). A replay cut short by a crash resumes at the next start with the
/// letters still waiting, so its intent is neither lost nor carried out twice: a letter the
/// replay already delivered is gone, and one it dead-lettered again says so (`replayedBy`).
final class ReplayIntentStore: Sendable {
    struct Intent: Sendable, Equatable {
        var id: String
        var createdAt: Timestamp
        var letters: [String]
        /// The operator forced it: stale letters are replayed too, after a crash as well.
        var force = false
    }

    /// Replays hold Apple's bodies no more than dead letters do, but they are the gateway's
    /// own bookkeeping: private, like the dead letters.
    enum FilePolicy: FileIOPolicy {
        static let fileMode: mode_t = 0o600
        static let directoryMode: mode_t = 0o700
        static func failure(_ call: SystemCallFailure) -> DeliveryError { DeliveryError(call) }
    }
    typealias Files = POSIXFileIO<FilePolicy>

    /// nil keeps intents in memory only (tests of the engine alone).
    let directory: String?
    private let logger: Logger

    init(directory: String?, logger: Logger) throws(DeliveryError) {
        self.directory = directory
        self.logger = logger
        if let directory {
            try Files.createDirectory(directory)
            try Files.requireDirectory(directory)
        }
    }

    static func newID() -> String { "replay-" + SecureRandom.hexToken(8) }

    /// Writes `intent` durably before any of its letters is replayed.
    func record(_ intent: Intent) throws(DeliveryError) {
        guard let directory else { return }
        let json: JSONValue = [
            "id": .string(intent.id),
            "createdAt": .string(intent.createdAt.iso8601),
            "letters": .array(intent.letters.map { .string($0) }),
            "force": .bool(intent.force),
        ]
        try Files.replaceFileDurably(path(intent.id, in: directory), json.serializedBytes())
    }

    /// Forgets a finished intent.
    func remove(_ id: String) {
        guard let directory else { return }
        try? Files.removeFile(path(id, in: directory))
        try? Files.syncDirectory(directory)
    }

    /// The intents a previous run left unfinished, oldest first.
    func unfinished() -> [Intent] {
        guard let directory, let names = try? Files.listDirectory(directory) else { return [] }
        var intents: [Intent] = []
        // A record cut short before its rename: that replay had not started.
        for name in names where name.hasSuffix(".tmp") { try? Files.removeFile(directory + "/" + name) }
        for name in names where name.hasPrefix("replay-") && name.hasSuffix(".json") {
            let path = directory + "/" + name
            guard let bytes = try? Files.readAll(path), let json = try? JSONValue.parse(bytes),
                  let id = json["id"]?.stringValue, name == id + ".json",
                  let createdAt = json["createdAt"]?.stringValue.flatMap(Timestamp.init(iso8601:)),
                  let letters = json["letters"]?.arrayValue?.compactMap(\.stringValue)
            else {
                logger.error("unreadable replay record left in place", [("path", path)])
                continue
            }
            intents.append(Intent(id: id, createdAt: createdAt, letters: letters.filter(DeadLetterStore.isValidID),
                                  force: json["force"]?.boolValue ?? false))
        }
        return intents.sorted { ($0.createdAt, $0.id) < ($1.createdAt, $1.id) }
    }

    private func path(_ id: String, in directory: String) -> String { directory + "/" + id + ".json" }
}
