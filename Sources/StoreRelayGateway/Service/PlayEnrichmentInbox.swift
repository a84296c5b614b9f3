import Dispatch
import StoreRelayCluster
import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore

/// Where Google Play pushes wait, acknowledged, for the Developer API before they are stored
/// (`PlayEnrichers`): written as durably as a stored event before the push is answered, and
/// removed once the event is stored. What a stop or a crash left there is handed back to be
/// finished.
protocol PlayEnrichmentInbox: Sendable {
    /// Whether `id` waits here (a Pub/Sub redelivery of a push not yet stored), without I/O.
    func contains(_ id: String) -> Bool
    /// The pushes held durably and not yet stored (in cluster mode, this instance's).
    var count: Int { get }
    /// Keeps `notification` (`encoded`, its `encoded()`); `completion(nil)` once that is
    /// durable, or the reason it is not.
    func write(_ notification: StoredNotification, encoded: [UInt8], completion: @escaping @Sendable (String?) -> Void)
    /// Forgets `id`: its event is stored.
    func remove(_ id: String)
    /// Hands `resume` what was acknowledged and left unfinished, oldest first: at start, and
    /// in cluster mode whenever another instance's claims run out. Throws when the inbox
    /// cannot be read: the start is refused rather than forgetting acknowledged pushes.
    func start(resume: @escaping @Sendable ([StoredNotification]) -> Void) throws(GatewayError)
    func stop()
}

/// Single-node mode: a `PendingRecordLog` at `DATA/play-enrichment/inbox.log` holding each
/// push's stored notification (its own encoding), group-committed like the journal. The
/// log's writer has its own serial queue, never a connection's.
final class LocalPlayEnrichmentInbox: PlayEnrichmentInbox {
    static let fileName = "inbox.log"

    private let log: PendingRecordLog
    private let logger: Logger

    init(directory: String, logger: Logger) {
        log = PendingRecordLog(directory: directory, name: Self.fileName, logger: logger)
        self.logger = logger
    }

    func contains(_ id: String) -> Bool { log.contains(id) }

    var count: Int { log.count }

    func write(_ notification: StoredNotification, encoded: [UInt8], completion: @escaping @Sendable (String?) -> Void) {
        log.put(PendingRecord(id: notification.id, bytes: encoded)) { error in
            completion(error.map { "the enrichment inbox cannot write (\($0.message))" })
        }
    }

    func remove(_ id: String) { log.remove(id) }

    /// An entry that does not decode is logged and kept in the log for an operator.
    func start(resume: @escaping @Sendable ([StoredNotification]) -> Void) throws(GatewayError) {
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
        resume(found.sorted { $0.receivedAt < $1.receivedAt })
    }

    func stop() {}
}

/// Cluster mode: the shared server's inbox (`ClusterInbox`), so a push one instance took is
/// finished by another when the first never comes back. This instance renews its claims on
/// the pushes it works on, and takes over those whose claims ran out, every quarter claim.
final class ClusterPlayEnrichmentInbox: PlayEnrichmentInbox {
    private let inbox: ClusterInbox
    private let watch: ServerWatch
    /// The ids this instance holds on the server and works on: renewed, and what `contains`
    /// knows (a put is in only once the server has it).
    private let held = Locked<Set<String>>([])
    private let stopped = Locked(false)
    private let timer = RepeatingTimer()
    private let queue = DispatchQueue(label: "storerelay.play-enrichment.cluster-inbox")

    init(inbox: ClusterInbox, watch: ServerWatch) {
        self.inbox = inbox
        self.watch = watch
    }

    func contains(_ id: String) -> Bool { held.current.contains(id) }

    var count: Int { held.current.count }

    /// Refused, as an acknowledgement is, while the server watch finds it not durable.
    func write(_ notification: StoredNotification, encoded: [UInt8], completion: @escaping @Sendable (String?) -> Void) {
        if let refusal = watch.acceptanceRefusal { return completion(refusal) }
        inbox.put(id: notification.id, encoded: encoded) { [held] error in
            if error == nil { held.withLock { _ = $0.insert(notification.id) } }
            completion(error)
        }
    }

    func remove(_ id: String) {
        held.withLock { _ = $0.remove(id) }
        inbox.remove(id)
    }

    func start(resume: @escaping @Sendable ([StoredNotification]) -> Void) throws(GatewayError) {
        let quarter = inbox.claim / 4
        timer.start(every: quarter, leeway: quarter / 10, on: queue) { [weak self] in
            guard let self else { return }
            inbox.renew(held.current)
            takeOver(resume)
        }
    }

    /// Takes over what other instances left, a page at a time until a page comes back short,
    /// so a dead instance's backlog is not left for many ticks. Nothing once stopped: a page
    /// that arrives then is claimed by nobody working on it, and is taken again when that
    /// claim runs out.
    private func takeOver(_ resume: @escaping @Sendable ([StoredNotification]) -> Void) {
        let limit = 100
        inbox.takeExpired(limit: limit) { [self] taken, page in
            guard let taken, !stopped.current else { return }
            if !taken.isEmpty {
                held.withLock { $0.formUnion(taken.map(\.id)) }
                resume(taken.sorted { $0.receivedAt < $1.receivedAt })
            }
            if page == limit { queue.async { self.takeOver(resume) } }
        }
    }

    func stop() {
        stopped.withLock { $0 = true }
        timer.stop()
    }
}
