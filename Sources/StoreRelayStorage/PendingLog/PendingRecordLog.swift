import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// A small durable set of records that wait for something to finish elsewhere (a Google
/// Play push waiting for the Developer API before it is journaled): `put` is durable when its
/// completion runs, `remove` forgets a record once it is no longer needed.
///
/// One append-only file (`PendingLogFormat`), group-committed as the journal is: the puts that
/// arrive while a `fdatasync` runs share the next one, so a burst costs a few syncs, not one
/// per record. A removal is written without a sync of its own: lost in a crash, it only
/// brings a record back that its owner finished already, and owners deduplicate by id.
/// When most of the file is removed records, it is rewritten with the live ones (temporary
/// file, sync, rename), so its size and the start-up read follow what is pending, not what
/// passed through.
///
/// The live records are kept in memory as well: the rewrite and a failed write's repair need
/// no read back, and there are only as many as their owner is working on.
public final class PendingRecordLog: Sendable {
    public typealias Completion = @Sendable (StorageError?) -> Void

    /// The directory and file; the directory is created with the first `put`.
    public let directory: String
    public let path: String
    private let logger: Logger
    private let compactionThreshold: Int
    let queue: DispatchQueue
    /// Operations waiting for the writer, and what the writer has made of the file.
    let state = Locked(PendingLogState())

    /// - Parameter compactionThreshold: the file is rewritten only once it is at least this
    ///   large and over twice the size of its live records.
    public init(directory: String, name: String, logger: Logger, compactionThreshold: Int = 1 << 20) {
        self.directory = directory
        self.path = directory + "/" + name
        self.logger = logger
        self.compactionThreshold = compactionThreshold
        queue = DispatchQueue(label: "storerelay.pending-log." + name)
    }

    deinit { state.withLock { $0.closeFile() } }

    /// Reads what the file holds (at start, before any `put`), in the order it was put. A torn
    /// tail (a crash in the middle of an append) is cut off; damage before the end is copied to
    /// `PATH.damaged-<UNIX ms>` for an operator and cut off too, with an error in the log.
    /// Called again, it returns what is live without reading the file.
    ///
    /// Blocking: call it at start-up.
    public func recover() throws(StorageError) -> [PendingRecord] {
        try queue.sync { Result { () throws(StorageError) in try recoverOnQueue() } }.get()
    }

    private func recoverOnQueue() throws(StorageError) -> [PendingRecord] {
        if let live = state.withLock({ $0.recovered ? $0.live.inOrder : nil }) { return live }
        guard JournalFiles.exists(path) else {
            state.withLock { $0.recovered = true }
            return []
        }
        let bytes = try JournalFiles.readAll(path)
        if bytes.count < PendingLogFormat.header.count, PendingLogFormat.header.starts(with: bytes) {
            // A crash between creating the file and syncing its header: nothing was put.
            try JournalFiles.removeFile(path)
            state.withLock { $0.recovered = true }
            return []
        }
        let scan = PendingLogFormat.scan(bytes[...])
        guard scan.validHeader else {
            throw StorageError(.corruptSegment, path: path,
                               message: "\(path) is not a pending-record log (bad header); move it aside to start without it")
        }
        let fd = try JournalFiles.openFile(path, O_RDWR)
        do throws(StorageError) {
            if scan.end < bytes.count {
                if scan.damaged {
                    try keepDamage(bytes[scan.end...], recordsBefore: scan.records.count)
                } else {
                    logger.warning("pending-record log: a torn append cut off (a crash while it was written)",
                                   [("file", path), ("bytes.cut", bytes.count - scan.end)])
                }
                try JournalFiles.truncate(fd, to: scan.end, path: path)
                try JournalFiles.syncData(fd, path: path)
            }
        } catch {
            close(fd)
            throw error
        }
        let live = PendingRecords(scan.records)
        state.withLock { state in
            state.fd = fd
            state.fileSize = scan.end
            state.live = live
            state.ids = Set(live.records.keys)
            state.recovered = true
        }
        return live.inOrder
    }

    /// The live records of the log file at `path`, read without changing it (for tools and
    /// tests; a torn tail is left out). Nil when there is no such file or it is not a log.
    public static func read(_ path: String) -> [PendingRecord]? {
        guard let bytes = try? JournalFiles.readAll(path) else { return nil }
        let scan = PendingLogFormat.scan(bytes[...])
        guard scan.validHeader else { return nil }
        return PendingRecords(scan.records).inOrder
    }

    /// Whether `id` is held durably (a put whose completion has not run yet is not).
    public func contains(_ id: String) -> Bool { state.withLock { $0.ids.contains(id) } }

    /// How many records are live.
    public var count: Int { state.withLock { $0.ids.count } }

    /// Writes `record` durably; `completion(nil)` runs once it is on the device, or with the
    /// error when it could not be written (it is then not kept).
    public func put(_ record: PendingRecord, completion: @escaping Completion) {
        guard PendingLogFormat.fits(record) else {
            return completion(StorageError(.recordTooLarge, path: path,
                                           message: "a pending record needs an id of 1-\(RecordFrame.maxIDBytes) bytes "
                                               + "and at most \(PendingLogFormat.maxPayloadBytes) bytes in all"))
        }
        enqueue(.put(record, completion))
    }

    /// Forgets `id`; no sync of its own (see the type's comment).
    public func remove(_ id: String) { enqueue(.remove(id)) }

    private func enqueue(_ operation: PendingOperation) {
        let schedule = state.withLock { state in
            state.queued.append(operation)
            if case .remove(let id) = operation { state.ids.remove(id) }
            defer { state.flushScheduled = true }
            return !state.flushScheduled
        }
        if schedule { queue.async { self.flush() } }
    }

    // MARK: The writer (on `queue`)

    /// Writes everything queued with one append and, when a put is among it, one sync; then
    /// runs the puts' completions. What arrives meanwhile waits for the next flush.
    private func flush() {
        let batch = state.withLock { state in
            defer { state.queued = []; state.flushScheduled = false }
            return state.queued
        }
        guard !batch.isEmpty else { return }
        let puts = batch.compactMap { operation -> Completion? in
            if case .put(_, let completion) = operation { return completion }
            return nil
        }
        let failure: StorageError?
        do throws(StorageError) {
            try append(batch, sync: !puts.isEmpty)
            failure = nil
        } catch {
            failure = error
            logger.error("pending records not written; puts fail until a write succeeds",
                         [("file", path), ("error", "\(error)")])
            repair(after: batch)
        }
        for completion in puts { completion(failure) }
        if failure == nil { compactIfWorthIt() }
    }

    private func append(_ batch: [PendingOperation], sync: Bool) throws(StorageError) {
        let (fd, offset) = try openForAppend()
        var bytes: [UInt8] = []
        for operation in batch { PendingLogFormat.encode(operation.record, into: &bytes) }
        try JournalFiles.writeAll(fd, bytes, at: offset, path: path)
        if sync { try JournalFiles.syncData(fd, path: path) }
        state.withLock { state in
            if sync { state.syncs += 1 }
            state.fileSize = offset + bytes.count
            for operation in batch {
                state.live.apply(operation.record)
                switch operation {
                case .put(let record, _): state.ids.insert(record.id)
                case .remove(let id): state.ids.remove(id)
                }
            }
        }
    }

    /// The open file and where the next append goes; creates the directory and the file (with
    /// its header, durably) the first time.
    private func openForAppend() throws(StorageError) -> (Int32, Int) {
        let (open, recovered) = state.withLock { state in (state.fd.map { ($0, state.fileSize) }, state.recovered) }
        if let open { return open }
        guard recovered else {
            // Never append blind to a file whose records were not read (or could not be).
            throw StorageError(.closed, path: path, message: "\(path) was not recovered, so nothing is written to it")
        }
        let header = PendingLogFormat.header
        try makeDirectory()
        // O_EXCL: a file that appeared since `recover()` is not overwritten.
        let fd = try JournalFiles.openFile(path, O_RDWR | O_CREAT | O_EXCL)
        do throws(StorageError) {
            try JournalFiles.writeAll(fd, header, at: 0, path: path)
            try JournalFiles.syncFile(fd, path: path)
            try JournalFiles.syncDirectory(directory)
        } catch {
            close(fd)
            try? JournalFiles.removeFile(path)
            throw error
        }
        state.withLock { state in
            state.fd = fd
            state.fileSize = header.count
        }
        return (fd, header.count)
    }

    /// After a failed write or sync the file's tail is unknown (and after a failed `fdatasync`
    /// the kernel may have dropped the pages): the batch's puts are forgotten and the file is
    /// rebuilt from the live records in memory. Until that succeeds, every write fails again.
    private func repair(after batch: [PendingOperation]) {
        let recovered = state.withLock { state in
            // The batch's puts were never held; its removals stand: their owners are done
            // with those records, so the rebuilt file leaves them out.
            for case .remove(let id) in batch { state.live.apply(.remove(id)) }
            state.closeFile()
            return state.recovered
        }
        guard recovered else { return }
        do throws(StorageError) {
            try rewrite()
        } catch {
            logger.error("pending-record log not rebuilt; retried with the next write", [("file", path), ("error", "\(error)")])
        }
    }

    private func compactIfWorthIt() {
        let worth = state.withLock { state in
            state.fileSize >= compactionThreshold && state.fileSize > 2 * (PendingLogFormat.header.count + state.live.encodedSize)
        }
        guard worth else { return }
        do throws(StorageError) {
            try rewrite()
        } catch {
            logger.warning("pending-record log not compacted; it stays as it is", [("file", path), ("error", "\(error)")])
        }
    }

    /// Writes the live records to `PATH.tmp`, syncs it and renames it over the log: a crash
    /// leaves the old file or the new one, both complete. Once the rename is done the old
    /// descriptor names a file nobody will read again, so it is closed whatever follows: a
    /// failure then leaves no file open, and the next write rebuilds it again.
    private func rewrite() throws(StorageError) {
        let live = state.withLock { $0.live.inOrder }
        var bytes = PendingLogFormat.header
        for record in live { PendingLogFormat.encode(.put(record), into: &bytes) }
        let temporary = path + ".tmp"
        try makeDirectory()
        try JournalFiles.removeFile(temporary)
        let fd = try JournalFiles.openFile(temporary, O_RDWR | O_CREAT | O_EXCL)
        do throws(StorageError) {
            try JournalFiles.writeAll(fd, bytes, at: 0, path: temporary)
            try JournalFiles.syncFile(fd, path: temporary)
            try JournalFiles.renameFile(temporary, path)
        } catch {
            close(fd)
            try? JournalFiles.removeFile(temporary)
            throw error
        }
        state.withLock { $0.closeFile() }
        do throws(StorageError) {
            try JournalFiles.syncDirectory(directory)
        } catch {
            close(fd)
            throw error
        }
        state.withLock { state in
            state.fd = fd
            state.fileSize = bytes.count
        }
    }

    /// Creates the directory the first time, and syncs its parent so the new entry survives
    /// a crash as the records in it must.
    private func makeDirectory() throws(StorageError) {
        guard !JournalFiles.exists(directory) else { return }
        try JournalFiles.createDirectory(directory)
        let slash = directory.lastIndex(of: "/")
        try JournalFiles.syncDirectory(slash.map { String(directory[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? ".")
    }

    private func keepDamage(_ damaged: ArraySlice<UInt8>, recordsBefore: Int) throws(StorageError) {
        let copy = path + ".damaged-" + String(WallClock().now().milliseconds)
        try JournalFiles.writeFile(copy, Array(damaged))
        try JournalFiles.syncDirectory(directory)
        logger.error("pending-record log damaged; its readable records are kept, the rest copied aside", [
            ("file", path), ("records.kept", recordsBefore), ("bytes.cut", damaged.count), ("copy", copy),
        ])
    }
}

/// One record of a `PendingRecordLog`: an owner's id and its bytes.
public struct PendingRecord: Sendable, Equatable {
    public let id: String
    public let bytes: [UInt8]

    public init(id: String, bytes: [UInt8]) {
        self.id = id
        self.bytes = bytes
    }
}

/// A queued change, with the completion a put waits on.
enum PendingOperation: Sendable {
    case put(PendingRecord, PendingRecordLog.Completion)
    case remove(String)

    var record: PendingLogRecord {
        switch self {
        case .put(let record, _): .put(record)
        case .remove(let id): .remove(id)
        }
    }
}

/// What the writer knows; behind the log's lock.
struct PendingLogState: Sendable {
    var queued: [PendingOperation] = []
    var flushScheduled = false
    /// Live and queued ids, for `contains` without waiting for the writer.
    var ids: Set<String> = []
    var live = PendingRecords()
    /// `recover()` has read the file (or found none): only then is anything written.
    var recovered = false
    var fd: Int32?
    var fileSize = 0
    /// The batches synced so far (for the tests of group commit).
    var syncs = 0

    mutating func closeFile() {
        if let fd { close(fd) }
        fd = nil
    }
}

/// The live records in the order they were put, with their encoded size.
struct PendingRecords: Sendable {
    var records: [String: (order: Int, record: PendingRecord)] = [:]
    private var next = 0
    private(set) var encodedSize = 0

    init() {}

    /// What `operations`, applied in order, leave live.
    init(_ operations: [PendingLogRecord]) {
        for operation in operations { apply(operation) }
    }

    mutating func apply(_ operation: PendingLogRecord) {
        switch operation {
        case .put(let record):
            if let old = records[record.id] { encodedSize -= PendingLogFormat.encodedSize(of: old.record) }
            records[record.id] = (next, record)
            next += 1
            encodedSize += PendingLogFormat.encodedSize(of: record)
        case .remove(let id):
            if let old = records.removeValue(forKey: id) { encodedSize -= PendingLogFormat.encodedSize(of: old.record) }
        }
    }

    var inOrder: [PendingRecord] { records.values.sorted { $0.order < $1.order }.map(\.record) }
}
