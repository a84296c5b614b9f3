import Dispatch
import StoreRelayCore

/// StoreRelay's durable journal: accepted notifications are appended to checksummed segment
/// files and acknowledged only once fdatasync'ed, with many appends sharing one sync.
///
/// Index, batch and counters sit behind one lock, held only for bookkeeping: an append takes
/// it, checks for a duplicate and joins the pending batch without changing threads. File I/O
/// happens on a serial writer queue, so appends arriving while a batch syncs form the next
/// batch. Completions run on a serial callback queue, one hop per batch; it targets the
/// accepting pool (`DispatchQueue.nonBlockingWork`), so they must not block.
public final class Journal: Sendable {
    /// The journal directory (for example `DATA/journal`).
    public let directory: String
    public let options: JournalOptions
    /// What recovery found and repaired when this journal was opened.
    public let recoveryIssues: [RecoveryIssue]

    let logger: Logger
    let state: Locked<JournalState>
    let writer: QueueConfined<SegmentWriter>
    let callbackQueue = DispatchQueue(label: "storerelay.journal.callbacks", target: .nonBlockingWork)
    /// Retiring appends to the dedupe snapshot and deletes whole segments: milliseconds of
    /// I/O that must not hold up the writer's next group commit.
    let retiredFile: QueueConfined<RetiredIDsFile>
    private let recoveredAtOpen: Locked<[RecoveredRecord]>
    private let released = Locked(false)
    /// The descriptor holding the directory's `lock` file (-1 once closed): one journal per
    /// directory at a time. Two processes appending to one directory would each create the
    /// other's next segment; the second would fail every batch from then on.
    private let lock: Locked<Int32>
    static let lockFileName = "lock"

    deinit { releaseLock() }

    /// Lets another journal open the directory: once closed, or when this one is dropped.
    func releaseLock() {
        lock.withLock { fd in
            if fd >= 0 { closeDescriptor(fd) }
            fd = -1
        }
    }

    private init(directory: String, options: JournalOptions, logger: Logger, state: JournalState, lock: Int32,
                 writer: SegmentWriter, retiredFile: RetiredIDsFile, recovered: [RecoveredRecord], issues: [RecoveryIssue]) {
        self.lock = Locked(lock)
        self.directory = directory
        self.options = options
        self.logger = logger
        self.state = Locked(state)
        self.writer = QueueConfined(writer, queue: DispatchQueue(label: "storerelay.journal.writer"))
        self.retiredFile = QueueConfined(retiredFile, queue: DispatchQueue(label: "storerelay.journal.retire"))
        self.recoveredAtOpen = Locked(recovered)
        self.recoveryIssues = issues
    }

    /// Opens (creating if needed) the journal in `directory` and recovers it: the segments
    /// not yet sealed (normally only the newest) are read in order, checked record by record
    /// and repaired (see `RecoveryIssue`); their ids enter the dedupe index, next to those of
    /// `seen-ids`. Sealed segments are not read: their records are checked when read back.
    public static func open(directory: String, options: JournalOptions = JournalOptions(),
                            logger: Logger) throws(StorageError) -> Journal {
        try JournalFiles.createDirectory(directory)
        let lockPath = directory + "/" + lockFileName
        guard let lock = try JournalFiles.lockExclusively(lockPath) else {
            throw StorageError(.inUse, path: lockPath,
                               message: "the journal in \(directory) is open in another process (is another storerelay serve using the same data directory?)")
        }
        var opened = false
        defer { if !opened { closeDescriptor(lock) } }
        let marker = SealedMarker.read(directory: directory)
        if marker == nil {
            logger.error("journal sealed marker is unreadable; every segment is read", [("journal.directory", directory)])
        }
        let sealedThrough = marker ?? 0
        var recovery = JournalRecovery(directory: directory, options: options, logger: logger, sealedThrough: sealedThrough)
        try recovery.run()

        var live: [EventIDDigest: LiveEntry] = [:]
        var records: [RecoveredRecord] = []
        /// The dedupe key of an event record (hashed once per record); nil for progress records.
        func digest(of record: DecodedRecord) -> EventIDDigest? {
            record.kind == JournalRecordKind.event.rawValue ? EventIDDigest(record.id) : nil
        }
        func admit(_ record: DecodedRecord, _ digest: EventIDDigest?, at position: RecordPosition) {
            // A sealed segment's ids are in seen-ids already.
            if let digest, position.segment > sealedThrough {
                live[digest] = LiveEntry(segment: position.segment, firstSeen: record.firstSeen)
            }
            let kind = JournalRecordKind(rawValue: record.kind)
            records.append(RecoveredRecord(kind: kind, id: record.id, firstSeen: Timestamp(milliseconds: record.firstSeen),
                                           position: position, progressPayload: kind == .event ? nil : record.body))
        }
        for (segment, record) in recovery.records {
            let digest = digest(of: record)
            guard digest.map({ live[$0] == nil }) ?? true else { continue }
            admit(record, digest, at: RecordPosition(segment: segment, offset: record.offset))
        }

        let writer = try SegmentWriter(directory: directory, sizeLimit: options.segmentSizeLimit, logger: logger, clock: options.clock,
                                       continuing: recovery.continuing, lastSequence: recovery.highestSequence)
        var segments = recovery.segments
        var end = RecordPosition(segment: recovery.continuing?.sequence ?? writer.sequence,
                                 offset: recovery.continuing?.length ?? 0)
        var rewrite: [(record: DecodedRecord, digest: EventIDDigest?)] = []
        var rewriting: Set<EventIDDigest> = []
        for record in recovery.salvaged {
            let digest = digest(of: record)
            // Nothing of a retired event is written again (its progress records neither); an
            // event already live or already salvaged once is not either.
            // A retired id whose lookup fails is written again: a possible duplicate kept beats
            // an acknowledged record dropped.
            guard recovery.retired.lookup(digest ?? EventIDDigest(record.id)) != .present else { continue }
            if let digest {
                guard live[digest] == nil, rewriting.insert(digest).inserted else { continue }
            }
            rewrite.append((record, digest))
        }
        if !rewrite.isEmpty {
            // Salvaged records were acknowledged once; they must be durable again before
            // their damaged copies are the only ones left.
            let report = writer.write(rewrite.map { salvaged in
                let record = salvaged.record
                return OutgoingRecord(kind: record.kind, id: Array(record.id.utf8), firstSeen: record.firstSeen, body: record.body)
            })
            let written = try report.result.get()
            segments.insert(written.segment)
            end = RecordPosition(segment: written.segment, offset: (written.offsets.first ?? 0) + written.bytes)
            for (salvaged, offset) in zip(rewrite, written.offsets) {
                admit(salvaged.record, salvaged.digest, at: RecordPosition(segment: written.segment, offset: offset))
            }
        }

        let state = JournalState(live: live, retired: recovery.retired, segments: segments,
                                 activeSegment: writer.sequence, sealedThrough: sealedThrough, end: end)
        logger.info("journal opened", [("journal.directory", directory), ("journal.segments", segments.count),
                                       ("journal.segments_read", String(Set(recovery.records.map(\.0)).count)),
                                       ("journal.records_read", records.count),
                                       ("journal.issues", recovery.issues.count)])
        opened = true
        let journal = Journal(directory: directory, options: options, logger: logger, state: state, lock: lock, writer: writer,
                              retiredFile: recovery.snapshotFile, recovered: records, issues: recovery.issues)
        // Segments an older version left unsealed, or a crash did, are sealed now: the next
        // open reads only the newest.
        let sealed = journal.retiredFile.queue.sync { () -> Result<Void, StorageError> in
            do throws(StorageError) {
                try journal.sealSegments()
                journal.saveRetiredIndexIfChanged()
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try sealed.get()
        return journal
    }

    /// The records the open read (those of unsealed segments, plus salvaged ones at their
    /// new positions), in journal order, for tests of recovery. Empty after
    /// `releaseRecoveredRecords()`.
    package var recovered: [RecoveredRecord] { recoveredAtOpen.current }

    /// Every record in the journal with its payload, read with `records(from:)`: all of them
    /// in memory at once, for tests. Empty after `releaseRecoveredRecords()`.
    package var recoveredRecords: [JournalRecord] {
        if released.current { return [] }
        var all: [JournalRecord] = []
        _ = try? forEachRecord(from: startPosition) { record in
            all.append(record)
            return true
        }
        return all
    }

    /// Drops the recovered records: the gateway reads the journal by position instead.
    public func releaseRecoveredRecords() {
        recoveredAtOpen.withLock { $0 = [] }
        released.withLock { $0 = true }
    }

    /// Whether `id` is in a batch not yet written and synced: whether it will be stored,
    /// nobody can say yet.
    public func isBeingStored(id: String) -> Bool {
        state.withLock { $0.inFlight[id] != nil }
    }

    /// Whether `id` is stored or being stored (in the pending or writing batch).
    public func contains(id: String) -> Bool {
        let digest = EventIDDigest(id)
        return state.withLock { $0.knows(id, digest) }
    }

    public var stats: JournalStats {
        state.withLock { s in
            var stats = s.stats
            stats.segments = s.segments.count
            return stats
        }
    }

    /// False after a failed write or sync, until a later batch succeeds: the gateway answers
    /// 503 and `/readyz` reports not ready meanwhile. Appends are still attempted for real.
    public var isWritable: Bool { state.withLock { $0.writable && !$0.closed } }

    /// Sequences of the segment files on disk, oldest first.
    public var segments: [UInt64] { state.withLock { $0.segments.sorted() } }

    /// The segment being appended to; `retireSegments` never removes it.
    public var activeSegment: UInt64 { state.withLock { $0.activeSegment } }
}
