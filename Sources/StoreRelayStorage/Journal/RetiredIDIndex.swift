#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Answers "was this id retired?" for the ids `seen-ids` holds, without holding them: what
/// memory keeps is a Bloom filter (about 10 bits an id) and, per chunk, its digest range and
/// every 128th digest's first half (about a bit an id). Ten million remembered ids cost about
/// 14 MB where a dictionary of them cost over half a gigabyte.
///
/// Every chunk of the file is sorted by digest, so a "maybe" from the filter is settled by
/// one read of at most 128 entries (3 KiB, from the page cache in practice) per chunk whose
/// range holds the digest: one of the compacted chunks, whose ranges are disjoint, and each
/// chunk a retirement appended since (at most `RetiredIDsFile.mostAppendedChunks`). Reads go through a descriptor the index holds: a compaction
/// renames a new file over the old one, and this index keeps reading the file it describes
/// until it is replaced by the new file's.
final class RetiredIDIndex: Sendable {
    /// Entries between two fences: what one lookup reads of a chunk.
    static let fenceInterval = 128

    struct Chunk: Sendable {
        /// File offset of the chunk's first entry.
        var entriesOffset: Int
        var count: Int
        var first: EventIDDigest
        var last: EventIDDigest
        /// `high` of entries 0, 128, 256, ...
        var fences: [UInt64]

        func mayHold(_ digest: EventIDDigest) -> Bool { !(digest < first) && !(last < digest) }
    }

    let chunks: [Chunk]
    /// Of `chunks`, the last ones, appended by retirements since the file was last compacted:
    /// each spans every digest, so a "maybe" reads one block of each.
    let appendedChunks: Int
    let filter: DigestBloomFilter
    /// Entries in the file (an id retired twice counts twice until a compaction merges it).
    let count: Int
    /// The oldest first-seen time held; nil when empty.
    let oldestFirstSeen: Int64?
    /// The file the chunks are in; nil for an empty index.
    let file: ReadOnlyFile?

    init(chunks: [Chunk], appendedChunks: Int = 0, filter: DigestBloomFilter, count: Int, oldestFirstSeen: Int64?, file: ReadOnlyFile?) {
        self.chunks = chunks
        self.appendedChunks = appendedChunks
        self.filter = filter
        self.count = count
        self.oldestFirstSeen = oldestFirstSeen
        self.file = file
    }

    static let empty = RetiredIDIndex(chunks: [], filter: DigestBloomFilter(capacity: 0), count: 0, oldestFirstSeen: nil, file: nil)

    /// What the file says of one id.
    enum Membership: Sendable {
        case absent, present
        /// The read that would settle it failed: neither answer may be given (the caller
        /// refuses the append, so Apple retries, rather than acknowledge or drop it unseen).
        case unknown
    }

    func lookup(_ digest: EventIDDigest) -> Membership {
        guard filter.mightContain(digest), let file else { return .absent }
        var failed = false
        for chunk in chunks where chunk.mayHold(digest) {
            switch file.find(digest, in: chunk) {
            case .found?: return .present
            case nil: failed = true
            case .absent?: continue
            }
        }
        return failed ? .unknown : .absent
    }

    /// This index with one more chunk, appended at `entriesOffset` and synced. `file` is
    /// the descriptor to read it through when this index had none (an empty file until now).
    func adding(_ sorted: [DedupeSnapshot.Entry], at entriesOffset: Int, file: ReadOnlyFile?) -> RetiredIDIndex {
        guard let chunk = Chunk(sorted, at: entriesOffset) else { return self }
        var filter = filter
        for entry in sorted { filter.insert(entry.digest) }
        let oldest = sorted.map(\.firstSeen).min().map { min(oldestFirstSeen ?? $0, $0) } ?? oldestFirstSeen
        return RetiredIDIndex(chunks: chunks + [chunk], appendedChunks: appendedChunks + 1, filter: filter,
                              count: count + sorted.count, oldestFirstSeen: oldest, file: self.file ?? file)
    }

    /// Bytes of memory the index takes beyond its fixed size.
    var memoryBytes: Int { filter.byteCount + chunks.reduce(0) { $0 + $1.fences.count * 8 + 64 } }
}

extension RetiredIDIndex.Chunk {
    /// The chunk of `sorted` entries whose first entry is at `entriesOffset`.
    init?(_ sorted: [DedupeSnapshot.Entry], at entriesOffset: Int) {
        guard let first = sorted.first, let last = sorted.last else { return nil }
        var builder = RetiredIDIndex.ChunkBuilder(entriesOffset: entriesOffset)
        for entry in sorted { builder.add(entry.digest) }
        self = RetiredIDIndex.Chunk(entriesOffset: entriesOffset, count: sorted.count, first: first.digest, last: last.digest,
                                    fences: builder.fences)
    }
}

extension RetiredIDIndex {
    /// Collects a chunk's fences while its entries stream past in order.
    struct ChunkBuilder {
        let entriesOffset: Int
        var count = 0
        var fences: [UInt64] = []
        var first: EventIDDigest?
        var last: EventIDDigest?

        mutating func add(_ digest: EventIDDigest) {
            if count % RetiredIDIndex.fenceInterval == 0 { fences.append(digest.high) }
            if first == nil { first = digest }
            last = digest
            count += 1
        }

        var chunk: Chunk? {
            guard let first, let last else { return nil }
            return Chunk(entriesOffset: entriesOffset, count: count, first: first, last: last, fences: fences)
        }
    }
}

extension EventIDDigest: Comparable {
    /// Chunks are sorted by this order: `high`, then `low`.
    static func < (a: EventIDDigest, b: EventIDDigest) -> Bool {
        a.high != b.high ? a.high < b.high : a.low < b.low
    }
}

/// A file open for reading, closed when the last index reading it is gone.
final class ReadOnlyFile: Sendable {
    let descriptor: Int32
    let path: String

    init(path: String) throws(StorageError) {
        descriptor = try JournalFiles.openFile(path, O_RDONLY)
        self.path = path
    }

    deinit { close(descriptor) }

    enum Lookup { case found, absent }

    /// Reads the one block of `chunk` where `digest` would be and searches it; nil when the
    /// read fails.
    func find(_ digest: EventIDDigest, in chunk: RetiredIDIndex.Chunk) -> Lookup? {
        let fences = chunk.fences
        // The last fence not above the digest starts the block; equal `high`s may run on into
        // the next blocks, up to the first fence above it.
        var low = 0, high = fences.count
        while low < high {
            let middle = (low + high) / 2
            if fences[middle] <= digest.high { low = middle + 1 } else { high = middle }
        }
        let end = min(low * RetiredIDIndex.fenceInterval, chunk.count)
        var startBlock = max(low - 1, 0)
        while startBlock > 0, fences[startBlock] == digest.high { startBlock -= 1 }
        let start = startBlock * RetiredIDIndex.fenceInterval
        guard end > start else { return .absent }
        let size = DedupeSnapshot.entrySize
        var buffer = [UInt8](repeating: 0, count: (end - start) * size)
        let offset = chunk.entriesOffset + start * size
        let read = try? buffer.withMutableBytes { (raw) throws(StorageError) in
            try JournalFiles.read(descriptor, into: raw, at: offset, path: path)
        }
        guard read == buffer.count else { return nil }
        return buffer.withUnsafeBytes { raw in
            var low = 0, high = end - start
            while low < high {
                let middle = (low + high) / 2
                let entry = EventIDDigest(high: raw.littleEndian(at: middle * size), low: raw.littleEndian(at: middle * size + 8))
                if entry == digest { return .found }
                if entry < digest { low = middle + 1 } else { high = middle }
            }
            return .absent
        }
    }
}
