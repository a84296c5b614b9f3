#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import StoreRelayCore

/// The on-disk event log behind `GET /api/events` (SPEC "Event log"): a summary of every
/// accepted event and where each of its deliveries stands, searchable by any of its ids.
///
/// Time-bucketed segments (`EventLogOptions.segmentSpan`): the open one appends with its
/// key index in memory (bounded), each sealed one has an `EventIndexFile` read with `pread`.
/// A lookup probes one index per segment, so its cost follows retention / span, not the
/// number of events, and memory holds the open segment's index plus a few numbers per
/// sealed segment. A delivery's outcome is one byte rewritten in place in its record.
///
/// It is an index, not the source of truth (the journal is): appends and outcomes are
/// queued and written in batches off the acceptance path, one `fdatasync` per batch, so a
/// `kill -9` can lose the last batch (milliseconds) but never corrupts the log: recovery
/// truncates a torn tail at the first record whose length or checksum fails.
///
/// Everything that touches the files runs on one serial queue (`queue`), which confines
/// `state`: that is the invariant behind `@unchecked Sendable`.
public final class EventLog: @unchecked Sendable {
    /// What `append` and `setState` leave for the next batch.
    enum Operation {
        case append(@Sendable () -> EventSummary?)
        case state(EventSummary.State, eventId: String, destination: String, receivedAt: Timestamp?)
    }

    /// The files, confined to `queue`.
    struct State {
        var open: OpenSegment?
        var sealed: [SealedSegment] = []
        /// Records appended in this batch and not yet written (they follow `open.size`).
        var buffer: [UInt8] = []
        var nextSequence: UInt64 = 1
        var closed = false
        var lastRetention = Int64.min
    }

    public let directory: String
    let options: EventLogOptions
    let logger: Logger
    let queue = DispatchQueue(label: "storerelay.event-log")
    /// Only ever touched on `queue`.
    var state = State()
    private let pending = Locked<(operations: [Operation], scheduled: Bool, dropped: Int)>(([], false, 0))
    /// Operations waiting for the log's queue at most; beyond, new ones are dropped.
    static let maxPendingOperations = 200_000
    /// What recovery found and repaired at open, for the log.
    public private(set) var recoveryNotes: [String] = []

    private init(directory: String, options: EventLogOptions, logger: Logger) {
        self.directory = directory
        self.options = options
        self.logger = logger
    }

    /// Opens (creating) the log in `directory`, repairing a torn tail and rebuilding any
    /// missing index. Blocking: call it at start-up.
    public static func open(directory: String, options: EventLogOptions = EventLogOptions(),
                            logger: Logger) throws(StorageError) -> EventLog {
        let log = EventLog(directory: directory, options: options, logger: logger)
        try JournalFiles.createDirectory(directory)
        let recovered: Result<[String], StorageError> = log.queue.sync {
            do throws(StorageError) { return .success(try log.recover()) } catch { return .failure(error) }
        }
        log.recoveryNotes = try recovered.get()
        log.queue.sync { log.applyRetention() }
        return log
    }

    /// Queues the summary `make` builds (on the log's queue, so what it parses costs the
    /// caller nothing) for the next batch. A second summary with an id the open segment
    /// already has is dropped.
    public func append(_ make: @escaping @Sendable () -> EventSummary?) {
        enqueue(.append(make))
    }

    /// Queues the new state of the delivery of event `eventId` to `destination`. With the
    /// event's `receivedAt`, only the segment whose time range holds it is searched (one
    /// probe); without it, every segment, newest first.
    public func setState(_ newState: EventSummary.State, eventId: String, destination: String, receivedAt: Timestamp? = nil) {
        enqueue(.state(newState, eventId: eventId, destination: destination, receivedAt: receivedAt))
    }

    /// Calls `completion` on the log's queue once everything queued so far is written.
    public func flush(completion: @escaping @Sendable () -> Void) {
        queue.async { completion() }
    }

    /// Seals the open segment and closes its file; later operations are ignored.
    public func close() {
        queue.sync {
            writeBatch()
            if let open = state.open { closeDescriptor(open.fd) }
            state.open = nil
            state.closed = true
        }
    }

    private func enqueue(_ operation: Operation) {
        let schedule = pending.withLock { pending in
            // An index may drop work, never grow without bound: if the disk is too slow for
            // the rate, what does not fit is left out (and logged by the next batch).
            guard pending.operations.count < Self.maxPendingOperations else {
                pending.dropped += 1
                return false
            }
            pending.operations.append(operation)
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        if schedule { queue.async { self.writeBatch() } }
    }

    /// Applies every queued operation, writes the batch with one write and one sync.
    /// Operations queued meanwhile make the next batch: the group commit of the journal.
    func writeBatch() {
        let (operations, dropped) = pending.withLock { pending in
            defer { pending = ([], false, 0) }
            return (pending.operations, pending.dropped)
        }
        if dropped > 0 {
            logger.error("event log fell behind; summaries or states left out", [("dropped", String(dropped))])
        }
        guard !state.closed else { return }
        for operation in operations {
            // One failed operation (a sealed segment that cannot be rewritten, a segment that
            // cannot be created) costs that operation, not the batch.
            do throws(StorageError) {
                switch operation {
                case .append(let make):
                    if let summary = make() { try append(summary) }
                case .state(let newState, let id, let destination, let receivedAt):
                    try update(id, destination: destination, to: newState, receivedAt: receivedAt)
                }
            } catch {
                logger.error("event log operation failed", [("directory", directory), ("error", "\(error)")])
            }
        }
        do throws(StorageError) {
            // A failed write has the open segment read again from its file (`flushBuffer`),
            // so its index never names records the file lacks.
            try flushBuffer()
        } catch {
            // Nothing here is the source of truth: the batch is lost from the index, loudly.
            logger.error("event log batch not written", [("directory", directory), ("error", "\(error)")])
        }
        let now = options.clock.now().milliseconds
        if now - state.lastRetention > 60_000 { applyRetention() }
    }
}
