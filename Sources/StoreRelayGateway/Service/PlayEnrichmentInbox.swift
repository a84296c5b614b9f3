import Dispatch
import StoreRelayCrypto
import StoreRelayDelivery
import StoreRelayCore

/// The Google Play pushes acknowledged but not yet stored because their enrichment is under
/// way: one file each in `DATA/play-enrichment/` (`<sha256 of the id>.rec`, the stored
/// notification's own encoding), written durably (temporary file, fsync, rename, directory
/// fsync) before the push is answered, removed once the event is stored.
///
/// All file I/O runs on the inbox's own serial queue, never on a connection's; the ids held
/// are kept in memory too, so a redelivery is told apart without touching the disk.
final class PlayEnrichmentInbox: Sendable {
    private let directory: String
    private let logger: Logger
    private let queue = DispatchQueue(label: "storerelay.play-enrichment.inbox")
    private let ids = Locked<Set<String>>([])

    init(directory: String, logger: Logger) {
        self.directory = directory
        self.logger = logger
    }

    func contains(_ id: String) -> Bool { ids.current.contains(id) }

    /// Writes `notification` durably; `completion(nil)` then, or the reason it could not be.
    func write(_ notification: StoredNotification, completion: @escaping @Sendable (String?) -> Void) {
        ids.withLock { _ = $0.insert(notification.id) }
        queue.async { [self] in
            do {
                if !PrivateFiles.exists(directory) {
                    try PrivateFiles.createDirectory(directory)
                    try PrivateFiles.syncDirectory(PrivateFiles.parent(of: directory))
                }
                try PrivateFiles.replaceFileDurably(path(notification.id), notification.encoded())
                completion(nil)
            } catch {
                ids.withLock { _ = $0.remove(notification.id) }
                completion("the enrichment inbox cannot write (\(error))")
            }
        }
    }

    /// Forgets `id`: its event is stored.
    func remove(_ id: String) {
        queue.async { [self] in
            do {
                try PrivateFiles.removeFile(path(id))
                try PrivateFiles.syncDirectory(directory)
            } catch {
                logger.warning("play enrichment inbox entry not removed; a restart enriches it again (a duplicate then)",
                               [("event.id", id), ("error", "\(error)")])
            }
            ids.withLock { _ = $0.remove(id) }
        }
    }

    /// What the inbox holds (at start, before any push is taken), oldest first. Unreadable
    /// entries are logged and left for an operator.
    func pending() -> [StoredNotification] {
        queue.sync {
            guard PrivateFiles.exists(directory), let names = try? PrivateFiles.listDirectory(directory) else { return [] }
            var found: [StoredNotification] = []
            for name in names where name.hasSuffix(".rec") {
                let file = directory + "/" + name
                guard let bytes = try? PrivateFiles.readAll(file), let notification = StoredNotification(decoding: bytes) else {
                    logger.error("play enrichment inbox entry unreadable; left in place", [("file", file)])
                    continue
                }
                found.append(notification)
            }
            ids.withLock { $0.formUnion(found.map(\.id)) }
            return found.sorted { $0.receivedAt < $1.receivedAt }
        }
    }

    private func path(_ id: String) -> String {
        directory + "/" + SHA256.hexHash(Array(id.utf8)) + ".rec"
    }
}

private extension PrivateFiles {
    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }
}
