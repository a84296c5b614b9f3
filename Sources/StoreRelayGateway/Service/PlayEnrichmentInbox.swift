import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore

/// The Google Play pushes acknowledged but not yet stored because their enrichment is under
/// way: a `PendingRecordLog` at `DATA/play-enrichment/inbox.log` holding each push's stored
/// notification (its own encoding), written durably and group-committed before the push is
/// answered, removed once the event is stored.
///
/// The log's writer has its own serial queue, never a connection's; the ids held are in memory
/// too, so a redelivery is told apart without touching the disk.
final class PlayEnrichmentInbox: Sendable {
    static let fileName = "inbox.log"

    private let log: PendingRecordLog
    private let logger: Logger

    init(directory: String, logger: Logger) {
        log = PendingRecordLog(directory: directory, name: Self.fileName, logger: logger)
        self.logger = logger
    }

    func contains(_ id: String) -> Bool { log.contains(id) }

    /// Writes `notification` durably; `completion(nil)` then, or the reason it could not be.
    func write(_ notification: StoredNotification, completion: @escaping @Sendable (String?) -> Void) {
        log.put(PendingRecord(id: notification.id, bytes: notification.encoded())) { error in
            completion(error.map { "the enrichment inbox cannot write (\($0.message))" })
        }
    }

    /// Forgets `id`: its event is stored.
    func remove(_ id: String) { log.remove(id) }

    /// What the inbox holds (at start, before any push is taken), oldest first. An entry that
    /// does not decode is logged and kept in the log for an operator.
    ///
    /// - Throws: when the log cannot be read at all; the start is refused rather than losing
    ///   acknowledged pushes.
    func pending() throws(GatewayError) -> [StoredNotification] {
        let records: [PendingRecord]
        do throws(StorageError) {
            records = try log.recover()
        } catch {
            throw GatewayError("play enrichment inbox: \(error.message)")
        }
        var found: [StoredNotification] = []
        for record in records {
            guard let notification = StoredNotification(decoding: record.bytes) else {
                logger.error("play enrichment inbox entry unreadable; kept in the inbox", [("file", log.path), ("event.id", record.id)])
                continue
            }
            found.append(notification)
        }
        return found.sorted { $0.receivedAt < $1.receivedAt }
    }
}
