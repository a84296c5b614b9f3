#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// The destinations an operator paused, in single-node mode: `DATA/paused-destinations.json`
/// (`{"paused":["billing"]}`), rewritten whole, atomically and fsynced, at each pause or
/// resume, and read at start, so a paused destination stays paused across restarts and
/// `kill -9` (SPEC "Delivery controls").
///
/// A name that a reload removes stays in the file: a destination defined again under that
/// name comes back paused, as it was left. Resuming it (or deleting the file while the
/// gateway is stopped) clears it.
final class PausedDestinationsFile: Sendable {
    /// Private, like the rest of the gateway's bookkeeping.
    enum FilePolicy: FileIOPolicy {
        static let fileMode: mode_t = 0o600
        static let directoryMode: mode_t = 0o700
        static func failure(_ call: SystemCallFailure) -> DeliveryError { DeliveryError(call) }
    }
    typealias Files = POSIXFileIO<FilePolicy>

    static let name = "paused-destinations.json"

    /// nil keeps the set in memory only (tests of the engine alone).
    let path: String?
    private let logger: Logger

    init(path: String?, logger: Logger) {
        self.path = path
        self.logger = logger
    }

    /// The paused names written last; none when there is no file. An unreadable file pauses
    /// nothing and is logged: it is left for the operator, and the next pause or resume
    /// replaces it.
    func load() -> Set<String> {
        guard let path, Files.exists(path) else { return [] }
        guard let bytes = try? Files.readAll(path), let json = try? JSONValue.parse(bytes),
              let names = json["paused"]?.arrayValue?.compactMap(\.stringValue)
        else {
            logger.error("unreadable list of paused destinations; none is paused", [("path", path)])
            return []
        }
        return Set(names)
    }

    /// Replaces the file with `paused` (sorted, so the file reads the same for the same set).
    /// Blocking I/O: call it off the cooperative pool.
    func store(_ paused: Set<String>) throws(DeliveryError) {
        guard let path else { return }
        let json: JSONValue = ["paused": .array(paused.sorted().map { .string($0) })]
        try Files.replaceFileDurably(path, json.serializedBytes())
    }
}
