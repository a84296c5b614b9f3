#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// The `sealed` file: the highest segment whose event ids are all in `seen-ids`. A segment is
/// sealed once the writer has moved past it, so the in-memory dedupe index holds only the
/// active segment's ids, and opening the journal reads only the segments after the marker:
/// a backlog of a million events costs neither memory nor start-up time for its ids.
///
/// 20 bytes: `SRSL`, the sequence (UInt64, little-endian), a zero word, and the CRC-32C of
/// the first 16 bytes. Replaced whole through a rename, so it is the old one or the new one.
enum SealedMarker {
    static let fileName = "sealed"
    private static let magic = Array("SRSL".utf8)
    private static let size = 20

    static func encode(_ sequence: UInt64) -> [UInt8] {
        var bytes = magic
        bytes.appendLittleEndian(sequence)
        bytes.appendLittleEndian(UInt32(0))
        let checksum = bytes.withUnsafeBytes { RecordFrame.checksum($0) }
        bytes.appendLittleEndian(checksum)
        return bytes
    }

    static func decode(_ bytes: [UInt8]) -> UInt64? {
        guard bytes.count == size, Array(bytes[0..<4]) == magic else { return nil }
        let checksum = bytes.withUnsafeBytes { RecordFrame.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<16])) }
        guard bytes.withUnsafeBytes({ $0.littleEndian(at: 16, as: UInt32.self) }) == checksum else { return nil }
        return bytes.withUnsafeBytes { $0.littleEndian(at: 4, as: UInt64.self) }
    }

    /// The sealed sequence in `directory`: 0 when there is no marker; nil when there is one we
    /// cannot read (then every segment is read at open, as if none were sealed).
    static func read(directory: String) -> UInt64? {
        let path = directory + "/" + fileName
        guard access(path, F_OK) == 0 else { return 0 }
        guard let bytes = try? JournalFiles.readPrefix(path, limit: size + 1) else { return nil }
        return decode(bytes)
    }

    static func write(_ sequence: UInt64, directory: String) throws(StorageError) {
        try JournalFiles.replaceFile(directory + "/" + fileName, encode(sequence))
        try JournalFiles.syncDirectory(directory)
    }
}

extension Journal {
    /// Moves the ids of every segment before the active one from memory to `seen-ids`, then
    /// records them sealed. On the retire queue (or in `open`, before anything else runs).
    /// On failure the ids stay in memory, still deduplicated, for the next try.
    func sealSegments() throws(StorageError) {
        let cutoff = options.clock.now().milliseconds - options.dedupeRetentionMilliseconds
        let plan: (through: UInt64, entries: [(entry: DedupeSnapshot.Entry, segment: UInt64)])? = state.withLock { s in
            guard let through = s.segments.filter({ $0 < s.activeSegment }).max(), through > s.sealedThrough else { return nil }
            var entries: [(entry: DedupeSnapshot.Entry, segment: UInt64)] = []
            for (digest, entry) in s.live where entry.segment <= through {
                s.live[digest] = nil
                // Ids already past the retention are not remembered, live or not.
                guard entry.firstSeen >= cutoff else { continue }
                s.retiring[digest] = entry.firstSeen
                entries.append(((digest, entry.firstSeen), entry.segment))
            }
            return (through, entries)
        }
        guard let plan else { return }
        do throws(StorageError) {
            try remember(plan.entries.map(\.entry))
            try SealedMarker.write(plan.through, directory: directory)
            state.withLock { $0.sealedThrough = max($0.sealedThrough, plan.through) }
            // Chunks accumulate one per sealed segment: merged now and then, so a lookup the
            // filter cannot settle reads a few blocks, however long a backlog pins segments.
            dropExpiredIDsIfDue()
            saveRetiredIndexIfChanged()
        } catch {
            state.withLock { s in
                for (entry, segment) in plan.entries {
                    s.retiring[entry.digest] = nil
                    s.live[entry.digest] = LiveEntry(segment: segment, firstSeen: entry.firstSeen)
                }
            }
            logger.error("journal could not seal segments; their ids stay in memory", [("error", error.message)])
            throw error
        }
    }

    /// Saves the index of `seen-ids` for the next open (`RetiredIDIndexFile`) when it changed
    /// since last saved. On the retire queue; a failure only costs the next open a scan.
    func saveRetiredIndexIfChanged() {
        let index = state.withLock { $0.retired }
        let (saved, length, known) = retiredFile.access { ($0.savedIndex, $0.length, $0.lengthIsKnown) }
        guard known, saved != ObjectIdentifier(index) else { return }
        do throws(StorageError) {
            try RetiredIDIndexFile.save(index, length: length, directory: directory)
            retiredFile.access { $0.savedIndex = ObjectIdentifier(index) }
        } catch {
            logger.warning("journal could not save the seen-ids index; the next start reads seen-ids whole", [("error", error.message)])
        }
    }

    /// Appends `entries` to `seen-ids`, synced, and moves them from `retiring` to the index.
    private func remember(_ entries: [DedupeSnapshot.Entry]) throws(StorageError) {
        let sorted = entries.sorted { $0.digest < $1.digest }
        try resyncRetiredFileIfNeeded()
        let length = retiredFile.access { $0.length }
        let newLength = try DedupeSnapshot.append(sorted, directory: directory, at: length)
        retiredFile.access { $0.appended(sorted, newLength: newLength) }
        // Only this queue changes `retired`, so the new index (a copy of the filter) is built unlocked.
        let next = state.withLock { $0.retired }.adding(sorted, at: length + 4, file: nil)
        state.withLock { s in
            s.retired = next
            for entry in sorted { s.retiring[entry.digest] = nil }
        }
    }
}
