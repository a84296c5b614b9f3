#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// Reads a journal directory back after a restart or crash: loads the dedupe snapshot, scans
/// every segment in order, repairs torn tails and damage, and gathers what `Journal` needs to
/// resume. Runs once, inside `Journal.open`, before any other access to the directory.
struct JournalRecovery {
    let directory: String
    let options: JournalOptions
    let logger: Logger

    var issues: [RecoveryIssue] = []
    /// Retired ids still within the dedupe retention: the index of `seen-ids`.
    var retired = RetiredIDIndex.empty
    /// The `seen-ids` file as left by recovery: always present, in the current layout.
    var snapshotFile = RetiredIDsFile()
    /// Good records in segment order: (segment, record), event records without their payload
    /// (read back by position when needed). A journal holding a long backlog is recovered
    /// with one small entry per record, plus one segment's bytes at a time.
    var records: [(UInt64, DecodedRecord)] = []
    /// Good records found after damage, to be written again.
    var salvaged: [DecodedRecord] = []
    var segments: Set<UInt64> = []
    var highestSequence: UInt64 = 0
    /// The newest good segment, truncated to its last good record, to continue appending to.
    var continuing: (sequence: UInt64, length: Int)?

    /// Segments up to this one were sealed: their ids are in `seen-ids`, so they are not
    /// read at open (only the newest segment always is, to continue it). 0 when none is.
    let sealedThrough: UInt64

    init(directory: String, options: JournalOptions, logger: Logger, sealedThrough: UInt64) {
        self.directory = directory
        self.options = options
        self.logger = logger
        self.sealedThrough = sealedThrough
    }

    mutating func run() throws(StorageError) {
        try JournalFiles.removeFile(directory + "/" + DedupeSnapshot.temporaryName)
        try JournalFiles.removeFile(directory + "/" + DedupeSnapshot.spillName)
        try JournalFiles.removeFile(directory + "/" + RetiredIDIndexFile.fileName + ".tmp")
        try loadSnapshot()
        let sequences = try JournalFiles.listDirectory(directory).compactMap(SegmentName.sequence(of:)).sorted()
        highestSequence = sequences.last ?? 0
        for sequence in sequences {
            if sequence <= sealedThrough && sequence != sequences.last {
                // Checked when read: a sealed segment's damage is found by the reader then.
                segments.insert(sequence)
                continue
            }
            try recoverSegment(sequence, isLast: sequence == sequences.last)
        }
    }

    /// Loads `seen-ids`, then leaves it present, in the current layout (sorted chunks),
    /// intact and without expired entries, so retirements only ever append to it. Streams:
    /// the ids stay on disk, indexed by `RetiredIDIndex`.
    private mutating func loadSnapshot() throws(StorageError) {
        let path = directory + "/" + DedupeSnapshot.fileName
        let now = options.clock.now().milliseconds
        let cutoff = now - options.dedupeRetentionMilliseconds
        guard access(path, F_OK) == 0 else {
            let made = try DedupeSnapshot.compact(merging: .empty, cutoff: cutoff, directory: directory)
            retired = made.index
            snapshotFile = RetiredIDsFile(length: made.length, holding: made.index, compactedAt: now)
            return
        }
        // The index saved by the last run, when it matches the file: no need to read every id.
        if let file = try? ReadOnlyFile(path: path), let length = try? JournalFiles.status(file.descriptor, path: path).size,
           let index = RetiredIDIndexFile.load(directory: directory, file: file, length: length) {
            retired = index
            // Compacted long ago as far as it knows: expired ids go at the next seal or retirement.
            snapshotFile = RetiredIDsFile(length: length, holding: index, compactedAt: 0)
            // Saved already: the open need not write it again.
            snapshotFile.savedIndex = ObjectIdentifier(index)
            return
        }
        guard let scan = try DedupeSnapshot.scan(path: path, cutoff: cutoff) else {
            try loadUnscannable(path, cutoff: cutoff)
            return
        }
        if scan.skippedDamage {
            // Only the last chunk can be torn by a crash: this is damage. Keep a copy, keep
            // every intact chunk; the damaged chunk's ids are forgotten.
            let aside = path + ".corrupt-\(now)"
            try Self.copy(path, to: aside)
            logger.error("journal dedupe snapshot has a damaged chunk; the ids in it are forgotten",
                         [("journal.file", path), ("journal.forensic_copy", aside)])
            issues.append(RecoveryIssue(kind: .corruptSnapshot, path: path, offset: 0, droppedBytes: 0,
                                        forensicCopy: aside, salvagedRecords: scan.index.count,
                                        detail: "a chunk failing its checksum before intact ones"))
        } else if scan.intactLength < scan.fileLength {
            logger.warning("journal dedupe snapshot ended in a partial chunk; rewritten without it",
                           [("journal.file", path), ("journal.dropped_bytes", String(scan.fileLength - scan.intactLength))])
            issues.append(RecoveryIssue(kind: .tornSnapshotTail, path: path, offset: scan.intactLength,
                                        droppedBytes: scan.fileLength - scan.intactLength, forensicCopy: nil,
                                        salvagedRecords: 0, detail: "chunk cut short or failing its checksum"))
        }
        guard scan.needsRewrite else {
            retired = scan.index
            snapshotFile = RetiredIDsFile(length: scan.intactLength, holding: scan.index, compactedAt: now)
            return
        }
        let made = try DedupeSnapshot.compact(merging: scan.index, unsortedChunks: scan.unsortedChunks, cutoff: cutoff, directory: directory)
        retired = made.index
        snapshotFile = RetiredIDsFile(length: made.length, holding: made.index, compactedAt: now)
    }

    /// Copies a file of any size through a fixed buffer (a forensic copy of `seen-ids`).
    private static func copy(_ source: String, to destination: String) throws(StorageError) {
        let input = try JournalFiles.openFile(source, O_RDONLY)
        defer { close(input) }
        try JournalFiles.removeFile(destination)
        let output = try JournalFiles.openFile(destination, O_WRONLY | O_CREAT | O_EXCL)
        defer { close(output) }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var offset = 0
        while true {
            let count = try buffer.withMutableBytes { (raw) throws(StorageError) in
                try JournalFiles.read(input, into: raw, at: offset, path: source)
            }
            guard count > 0 else { break }
            try JournalFiles.writeAll(output, Array(buffer[0..<count]), at: offset, path: destination)
            offset += count
        }
        try JournalFiles.syncFile(output, path: destination)
    }

    /// A `seen-ids` that is not a version 2 file: a version 1 file (read whole, once, and
    /// rewritten), or one whose header is not ours (moved aside; its ids are forgotten).
    private mutating func loadUnscannable(_ path: String, cutoff: Int64) throws(StorageError) {
        let now = options.clock.now().milliseconds
        let bytes = try JournalFiles.readAll(path)
        var entries: [DedupeSnapshot.Entry] = []
        if let contents = DedupeSnapshot.decode(bytes), contents.isOldVersion {
            entries = contents.entries
        } else {
            let aside = path + ".corrupt-\(now)"
            try JournalFiles.renameFile(path, aside)
            try JournalFiles.syncDirectory(directory)
            logger.error("journal dedupe snapshot is damaged; moved aside, ids of retired segments are forgotten",
                         [("journal.file", aside)])
            issues.append(RecoveryIssue(kind: .corruptSnapshot, path: path, offset: 0, droppedBytes: bytes.count,
                                        forensicCopy: aside, salvagedRecords: 0, detail: "unknown header or version"))
        }
        let made = try DedupeSnapshot.compact(merging: .empty, extra: entries, cutoff: cutoff, directory: directory)
        retired = made.index
        snapshotFile = RetiredIDsFile(length: made.length, holding: made.index, compactedAt: now)
    }

    private mutating func recoverSegment(_ sequence: UInt64, isLast: Bool) throws(StorageError) {
        let path = SegmentName.path(sequence, in: directory)
        let mapped = try MappedSegment(path: path)
        try mapped.withUnsafeBytes { (bytes) throws(StorageError) in
            try recoverSegment(sequence, path: path, bytes: bytes, isLast: isLast)
        }
    }

    private mutating func recoverSegment(_ sequence: UInt64, path: String, bytes: UnsafeRawBufferPointer,
                                         isLast: Bool) throws(StorageError) {
        let scan = SegmentScanner.scan(bytes, sequence: sequence, maxPayloadBytes: options.maxPayloadBytes, eventBodies: false)
        if let problem = scan.headerProblem {
            try setAside(path, size: bytes.count, problem: problem, isLast: isLast)
            return
        }
        segments.insert(sequence)
        records.append(contentsOf: scan.records.map { (sequence, $0) })
        if let damage = scan.damages.first {
            let torn = isLast && scan.salvaged.isEmpty
            let dropped = bytes.count - scan.goodLength
            var copy: String?
            if torn {
                logger.warning("journal dropped a torn write at the end of the last segment",
                               [("journal.segment", path), ("journal.offset", damage.offset),
                                ("journal.bytes", dropped), ("reason", damage.problem.rawValue)])
            } else {
                copy = path + ".corrupt-\(damage.offset)"
                try JournalFiles.writeFile(copy!, Array(bytes[damage.offset...]))
                logger.error("journal segment is damaged; tail copied aside and truncated",
                             [("journal.segment", path), ("journal.offset", damage.offset),
                              ("journal.copy", copy!), ("journal.salvaged", scan.salvaged.count),
                              ("reason", damage.problem.rawValue)])
            }
            let fd = try JournalFiles.openFile(path, O_WRONLY)
            defer { closeDescriptor(fd) }
            try JournalFiles.truncate(fd, to: scan.goodLength, path: path)
            try JournalFiles.syncData(fd, path: path)
            if copy != nil { try JournalFiles.syncDirectory(directory) }
            salvaged.append(contentsOf: scan.salvaged)
            issues.append(RecoveryIssue(kind: torn ? .tornTail : .corruption, path: path, offset: damage.offset,
                                        droppedBytes: dropped, forensicCopy: copy, salvagedRecords: scan.salvaged.count,
                                        detail: damage.problem.rawValue))
        }
        // The newest readable segment is continued, even when a later one was set aside.
        continuing = (sequence, scan.goodLength)
    }

    /// A segment without a valid header holds no record we can trust. A short last one is a
    /// crash while it was being created and is removed; anything else is moved aside whole.
    private mutating func setAside(_ path: String, size: Int, problem: SegmentScan.HeaderProblem,
                                   isLast: Bool) throws(StorageError) {
        if isLast && problem == .short {
            try JournalFiles.removeFile(path)
            try JournalFiles.syncDirectory(directory)
            logger.warning("journal removed a segment torn while it was created", [("journal.segment", path)])
            issues.append(RecoveryIssue(kind: .tornTail, path: path, offset: 0, droppedBytes: size,
                                        forensicCopy: nil, salvagedRecords: 0, detail: "short segment header"))
            return
        }
        let aside = path + ".corrupt-0"
        try JournalFiles.renameFile(path, aside)
        try JournalFiles.syncDirectory(directory)
        logger.error("journal segment has an unreadable header; moved aside",
                     [("journal.segment", path), ("journal.copy", aside), ("reason", "\(problem)")])
        issues.append(RecoveryIssue(kind: .unreadableSegment, path: path, offset: 0, droppedBytes: size,
                                    forensicCopy: aside, salvagedRecords: 0, detail: "\(problem)"))
    }
}
