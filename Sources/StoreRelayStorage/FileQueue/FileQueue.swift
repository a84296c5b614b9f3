import Dispatch
import StoreRelayCore

/// A `file` destination: events appended as JSON lines to segment files in one directory,
/// each acknowledged only once written and fdatasync'ed, many appends sharing one sync.
///
/// Layout (see `QueueSegmentName`): the segment being written is `<seq>.jsonl.open`; closed
/// segments are `<seq>.jsonl` (or `<seq>.jsonl.gz` with `compress gzip`), complete and
/// made of whole lines, and a consumer may read and delete them at any time.
///
/// Batching, counters and shutdown sit behind one lock held only for bookkeeping, so an
/// append joins the pending batch without changing threads; file writes run on a serial
/// writer queue (so appends arriving during a sync form the next batch); compression on
/// its own queue, off the append path. Completions run on a serial callback queue, one hop
/// per batch.
public final class FileQueue: Sendable {
    /// Creates a queue directory (and its parents) with the queue's mode, 0750: group members
    /// consume it. Opening a queue does this; so does a reload that adds a destination, so
    /// both make the same directory.
    public static func createDirectory(_ directory: String) throws(StorageError) {
        try QueueFiles.createDirectory(directory)
        try QueueFiles.requireDirectory(directory)
    }

    /// The queue directory (the `DIR` of `destination NAME file DIR`).
    public let directory: String
    public let options: FileQueueOptions
    /// What opening found and repaired from a previous run.
    public let recovery: FileQueueRecovery

    let logger: Logger
    let state: Locked<FileQueueState>
    let writer: QueueConfined<QueueSegmentWriter>
    let compressionQueue: DispatchQueue
    let callbackQueue = DispatchQueue(label: "storerelay.filequeue.callbacks", target: .deliveryWork)
    /// The age-check timer; set once after init, cancelled by `close` or `deinit`.
    let ageTimer = Locked<(any DispatchSourceTimer)?>(nil)

    private init(directory: String, options: FileQueueOptions, recovery: FileQueueRecovery, logger: Logger,
                 state: Locked<FileQueueState>, writer: QueueConfined<QueueSegmentWriter>, compressionQueue: DispatchQueue) {
        self.directory = directory
        self.options = options
        self.recovery = recovery
        self.logger = logger
        self.state = state
        self.writer = writer
        self.compressionQueue = compressionQueue
    }

    deinit { ageTimer.withLock { $0?.cancel() } }

    /// Opens (creating if needed) the queue in `directory` and recovers what a previous run
    /// left: the open segment is cut back to whole lines and closed, leftover `.tmp` files
    /// are removed, unfinished compressions are redone, and new segments continue after the
    /// highest sequence found. Blocks the caller while the writer queue does this.
    public static func open(directory: String, options: FileQueueOptions = FileQueueOptions(),
                            logger: Logger) throws(StorageError) -> FileQueue {
        let directory = directory.count > 1 && directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        let writerQueue = DispatchQueue(label: "storerelay.filequeue.writer")
        let compressionQueue = DispatchQueue(label: "storerelay.filequeue.compression")
        let state = Locked(FileQueueState())
        let onClosed = compressionHandler(directory: directory, options: options, logger: logger,
                                          state: state, queue: compressionQueue)
        let recovered = writerQueue.sync {
            Result { () throws(StorageError) -> SegmentRecovery in
                try FileQueue.createDirectory(directory)
                var recovery = SegmentRecovery(directory: directory, compression: options.compression, logger: logger)
                try recovery.run()
                return recovery
            }
        }
        let recovery = try recovered.get()
        let writer = QueueSegmentWriter(directory: directory, options: options, logger: logger,
                                   lastSequence: recovery.result.lastSequence, onClosed: onClosed)
        let queue = FileQueue(directory: directory, options: options, recovery: recovery.result, logger: logger,
                              state: state, writer: QueueConfined(writer, queue: writerQueue),
                              compressionQueue: compressionQueue)
        state.withLock { $0.stats.segmentsClosed = recovery.result.closedSegments.count }
        recovery.toCompress.forEach(onClosed)
        queue.startAgeTimer()
        logger.info("file queue opened", [("filequeue.directory", directory),
                                          ("filequeue.next_sequence", String(recovery.result.lastSequence + 1))])
        return queue
    }

    /// Counters since open. Never call from a completion that must not wait briefly.
    public var stats: FileQueueStats { state.withLock { $0.stats } }

    /// False after a failed write or sync, until a later batch succeeds.
    public var isWritable: Bool {
        state.withLock { $0.writable && $0.acceptsAppends }
    }

    /// The sequence of the `.open` segment, if one is open (segments are created on the
    /// first line, so none is open before it or right after a rotation).
    public var openSequence: UInt64? { state.withLock { $0.openSequence } }

    /// The closure the writer calls with each closed segment: compresses it on the
    /// compression queue (with `compress gzip`) and counts the outcome.
    private static func compressionHandler(directory: String, options: FileQueueOptions, logger: Logger,
                                           state: Locked<FileQueueState>,
                                           queue: DispatchQueue) -> @Sendable (UInt64) -> Void {
        guard options.compression == .gzip else { return { _ in } }
        let compressor = SegmentCompressor(directory: directory, level: options.compressionLevel)
        return { sequence in
            queue.async {
                let outcome = Result { () throws(StorageError) in try compressor.compress(sequence) }
                if case .success(.notOurs) = outcome {
                    logger.error("file queue left alone a closed segment's name that is not a regular file (a link?)",
                                 [("filequeue.segment", QueueSegmentName(sequence, .closed).path(in: directory))])
                }
                if case .failure(let error) = outcome {
                    logger.error("file queue could not compress a closed segment; it stays uncompressed",
                                 [("filequeue.segment", QueueSegmentName(sequence, .closed).path(in: directory)),
                                  ("error", error.message)])
                }
                state.withLock { s in
                    switch outcome {
                    case .success(.compressed): s.stats.segmentsCompressed += 1
                    case .success(.alreadyTaken), .success(.notOurs): break
                    case .failure: s.stats.compressionFailures += 1
                    }
                }
            }
        }
    }
}
