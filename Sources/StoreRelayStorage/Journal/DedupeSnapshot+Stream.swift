#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `seen-ids` read and rewritten through fixed buffers, so neither opening a journal that
/// remembers ten million ids nor compacting it ever holds the ids in memory.
extension DedupeSnapshot {
    /// Entries read or written per I/O call: 96 KiB.
    static let blockEntries = 4096
    /// A compaction writes chunks of at most this many entries, each a disjoint digest range.
    static let compactedChunkEntries = 65_536

    /// What opening `seen-ids` found.
    struct Scan {
        var index: RetiredIDIndex
        /// Bytes up to the end of the last intact chunk.
        var intactLength: Int
        var fileLength: Int
        /// A damaged chunk was followed by intact ones (not what a crash leaves).
        var skippedDamage = false
        /// Chunks not sorted (written by a StoreRelay before this index existed): not in the
        /// index's chunks, so the file must be rewritten before lookups rely on it.
        var unsortedChunks: [(entriesOffset: Int, count: Int)] = []
        /// Entries older than the retention, still in the file.
        var expired = 0

        /// Whether the file must be rewritten before retirements append to it again.
        var needsRewrite: Bool { skippedDamage || !unsortedChunks.isEmpty || expired > 0 || intactLength < fileLength }
    }

    /// Reads a version 2 `seen-ids` chunk by chunk: checks each chunk's CRC and order, and
    /// builds the index of its intact chunks. nil when the file is not a version 2 file (the
    /// caller decodes a version 1 file whole, once, and rewrites it).
    static func scan(path: String, cutoff: Int64) throws(StorageError) -> Scan? {
        let file = try ReadOnlyFile(path: path)
        let length = try JournalFiles.status(file.descriptor, path: path).size
        var header = [UInt8](repeating: 0, count: headerSize)
        let got = try header.withMutableBytes { (raw) throws(StorageError) in
            try JournalFiles.read(file.descriptor, into: raw, at: 0, path: path)
        }
        guard got == headerSize, Array(header[0..<4]) == magic,
              header.withUnsafeBytes({ $0.littleEndian(at: 4, as: UInt32.self) }) == version else { return nil }
        var filter = DigestBloomFilter(capacity: max(0, length - headerSize) / entrySize * 5 / 4)
        var chunks: [RetiredIDIndex.Chunk] = []
        var scan = Scan(index: .empty, intactLength: headerSize, fileLength: length)
        var total = 0
        var oldest: Int64?
        var offset = headerSize
        var buffer = [UInt8](repeating: 0, count: blockEntries * entrySize)
        while offset + 8 <= length {
            var countBytes = [UInt8](repeating: 0, count: 4)
            _ = try countBytes.withMutableBytes { (raw) throws(StorageError) in
                try JournalFiles.read(file.descriptor, into: raw, at: offset, path: path)
            }
            let count = Int(countBytes.withUnsafeBytes { $0.littleEndian(at: 0, as: UInt32.self) })
            let end = offset + 4 + count * entrySize
            guard count > 0, end + 4 <= length else { break }
            // One pass over the chunk: checksum and order, and what the index will take of it,
            // held aside (one chunk's digests) until the checksum says the chunk is intact.
            var crc = countBytes.withUnsafeBytes { RecordFrame.checksum($0) }
            var sorted = true
            var previous: EventIDDigest?
            var digests: [EventIDDigest] = []
            digests.reserveCapacity(count)
            var builder = RetiredIDIndex.ChunkBuilder(entriesOffset: offset + 4)
            var expired = 0
            var chunkOldest: Int64?
            var read = 0
            while read < count {
                let take = min(blockEntries, count - read)
                try readEntries(file, at: offset + 4 + read * entrySize, count: take, into: &buffer)
                buffer.withUnsafeBytes { raw in
                    let block = UnsafeRawBufferPointer(rebasing: raw[0..<(take * entrySize)])
                    crc = RecordFrame.checksum(block, continuing: crc)
                    for index in 0..<take {
                        let at = index * entrySize
                        let digest = EventIDDigest(high: block.littleEndian(at: at), low: block.littleEndian(at: at + 8))
                        let firstSeen = Int64(bitPattern: block.littleEndian(at: at + 16, as: UInt64.self))
                        if let previous, digest < previous { sorted = false }
                        previous = digest
                        digests.append(digest)
                        builder.add(digest)
                        if firstSeen < cutoff { expired += 1 }
                        chunkOldest = min(chunkOldest ?? firstSeen, firstSeen)
                    }
                }
                read += take
            }
            var stored = [UInt8](repeating: 0, count: 4)
            _ = try stored.withMutableBytes { (raw) throws(StorageError) in
                try JournalFiles.read(file.descriptor, into: raw, at: end, path: path)
            }
            guard crc == stored.withUnsafeBytes({ $0.littleEndian(at: 0, as: UInt32.self) }) else {
                guard end + 4 + 8 <= length else { break }
                scan.skippedDamage = true
                offset = end + 4
                continue
            }
            for digest in digests { filter.insert(digest) }
            scan.expired += expired
            if let chunkOldest { oldest = min(oldest ?? chunkOldest, chunkOldest) }
            if !sorted {
                scan.unsortedChunks.append((offset + 4, count))
            } else if let chunk = builder.chunk {
                chunks.append(chunk)
            }
            total += count
            offset = end + 4
            scan.intactLength = offset
        }
        scan.index = RetiredIDIndex(chunks: chunks, filter: filter, count: total, oldestFirstSeen: oldest, file: file)
        return scan
    }

    private static func readEntries(_ file: ReadOnlyFile, at offset: Int, count: Int, into buffer: inout [UInt8]) throws(StorageError) {
        let bytes = count * entrySize
        let got = try buffer.withMutableBytes { (raw) throws(StorageError) in
            try JournalFiles.read(file.descriptor, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<bytes]), at: offset, path: file.path)
        }
        guard got == bytes else { throw StorageError(.io, path: file.path, message: "seen-ids ended while being read") }
    }

    /// Rewrites `seen-ids` atomically and durably as the sorted merge of every intact chunk
    /// the scan or index knows, the `unsortedChunks` of an older StoreRelay (each sorted on its
    /// own through a spill file: one retirement's ids in memory at a time), and `extra` (a
    /// version 1 file's entries), without entries older than `cutoff`; an id held twice keeps
    /// its latest first-seen time. Streams: memory holds one block per chunk and one chunk
    /// out. Returns the new file's index, its length, and how many expired entries it dropped.
    static func compact(
        merging index: RetiredIDIndex, unsortedChunks: [(entriesOffset: Int, count: Int)] = [], extra: [Entry] = [],
        cutoff: Int64, directory: String
    ) throws(StorageError) -> (index: RetiredIDIndex, length: Int, dropped: Int) {
        var sources: [any EntrySource] = []
        if let file = index.file {
            for chunk in index.chunks { sources.append(ChunkReader(file: file, offset: chunk.entriesOffset, count: chunk.count)) }
        }
        if let file = index.file, !unsortedChunks.isEmpty {
            sources += try spillSorted(unsortedChunks, from: file, directory: directory)
        }
        if !extra.isEmpty { sources.append(MemorySource(extra.sorted { $0.digest < $1.digest })) }

        let temporary = directory + "/" + temporaryName
        try JournalFiles.removeFile(temporary)
        let fd = try JournalFiles.openFile(temporary, O_WRONLY | O_CREAT | O_EXCL)
        var length = 0
        var dropped = 0
        var chunks: [RetiredIDIndex.Chunk] = []
        var filter = DigestBloomFilter(capacity: (index.count + extra.count) * 5 / 4)
        var oldest: Int64?
        do throws(StorageError) {
            try JournalFiles.writeAll(fd, header(), at: 0, path: temporary)
            length = headerSize
            var pending: [Entry] = []
            pending.reserveCapacity(compactedChunkEntries)
            func flush() throws(StorageError) {
                guard !pending.isEmpty, let chunk = RetiredIDIndex.Chunk(pending, at: length + 4) else { return }
                let bytes = Self.chunk(pending, sorted: true)
                try JournalFiles.writeAll(fd, bytes, at: length, path: temporary)
                chunks.append(chunk)
                length += bytes.count
                pending.removeAll(keepingCapacity: true)
            }
            var merge = try Merge(sources)
            while let entry = try merge.next() {
                guard entry.firstSeen >= cutoff else {
                    dropped += 1
                    continue
                }
                pending.append(entry)
                filter.insert(entry.digest)
                oldest = min(oldest ?? entry.firstSeen, entry.firstSeen)
                if pending.count == compactedChunkEntries { try flush() }
            }
            try flush()
            try JournalFiles.syncFile(fd, path: temporary)
        } catch {
            close(fd)
            try? JournalFiles.removeFile(temporary)
            throw error
        }
        close(fd)
        try JournalFiles.renameFile(temporary, directory + "/" + fileName)
        try JournalFiles.syncDirectory(directory)
        let file = try ReadOnlyFile(path: directory + "/" + fileName)
        let count = chunks.reduce(0) { $0 + $1.count }
        return (RetiredIDIndex(chunks: chunks, filter: filter, count: count, oldestFirstSeen: oldest, file: file), length, dropped)
    }
}

extension DedupeSnapshot {
    static let spillName = "seen-ids.sorting"

    /// Each unsorted chunk, read and sorted alone, written to a spill file (removed once
    /// opened: the reader keeps it) as a sorted chunk to merge from.
    fileprivate static func spillSorted(
        _ chunks: [(entriesOffset: Int, count: Int)], from file: ReadOnlyFile, directory: String
    ) throws(StorageError) -> [any EntrySource] {
        let path = directory + "/" + spillName
        try JournalFiles.removeFile(path)
        let fd = try JournalFiles.openFile(path, O_WRONLY | O_CREAT | O_EXCL)
        var placed: [(offset: Int, count: Int)] = []
        var length = 0
        do throws(StorageError) {
            for chunk in chunks {
                var reader = ChunkReader(file: file, offset: chunk.entriesOffset, count: chunk.count)
                var entries: [Entry] = []
                entries.reserveCapacity(chunk.count)
                while let entry = try reader.next() { entries.append(entry) }
                let bytes = Self.chunk(entries)
                try JournalFiles.writeAll(fd, bytes, at: length, path: path)
                placed.append((length + 4, chunk.count))
                length += bytes.count
            }
        } catch {
            close(fd)
            try? JournalFiles.removeFile(path)
            throw error
        }
        close(fd)
        let spill = try ReadOnlyFile(path: path)
        try JournalFiles.removeFile(path)
        return placed.map { ChunkReader(file: spill, offset: $0.offset, count: $0.count) }
    }
}

/// Sorted entries, one at a time.
private protocol EntrySource {
    mutating func next() throws(StorageError) -> DedupeSnapshot.Entry?
}

/// One sorted chunk of a file, read a block at a time.
private struct ChunkReader: EntrySource {
    let file: ReadOnlyFile
    var offset: Int
    var remaining: Int
    private var buffer: [UInt8] = []
    private var position = 0

    init(file: ReadOnlyFile, offset: Int, count: Int) {
        self.file = file
        self.offset = offset
        remaining = count
    }

    mutating func next() throws(StorageError) -> DedupeSnapshot.Entry? {
        let size = DedupeSnapshot.entrySize
        if position == buffer.count {
            guard remaining > 0 else { return nil }
            let take = min(DedupeSnapshot.blockEntries, remaining)
            buffer = [UInt8](repeating: 0, count: take * size)
            let got = try buffer.withMutableBytes { (raw) throws(StorageError) in
                try JournalFiles.read(file.descriptor, into: raw, at: offset, path: file.path)
            }
            guard got == buffer.count else { throw StorageError(.io, path: file.path, message: "seen-ids ended while being merged") }
            offset += buffer.count
            remaining -= take
            position = 0
        }
        let at = position
        position += size
        return buffer.withUnsafeBytes { raw in
            (EventIDDigest(high: raw.littleEndian(at: at), low: raw.littleEndian(at: at + 8)),
             Int64(bitPattern: raw.littleEndian(at: at + 16, as: UInt64.self)))
        }
    }
}

private struct MemorySource: EntrySource {
    let entries: [DedupeSnapshot.Entry]
    var position = 0
    init(_ entries: [DedupeSnapshot.Entry]) { self.entries = entries }

    mutating func next() throws(StorageError) -> DedupeSnapshot.Entry? {
        guard position < entries.count else { return nil }
        defer { position += 1 }
        return entries[position]
    }
}

/// The k-way merge of sorted sources by digest (a binary heap of their heads); equal digests
/// come out once, with the latest first-seen time.
private struct Merge {
    private var sources: [any EntrySource]
    private var heap: [(entry: DedupeSnapshot.Entry, source: Int)] = []

    init(_ sources: [any EntrySource]) throws(StorageError) {
        self.sources = sources
        for index in sources.indices {
            if let entry = try self.sources[index].next() { push((entry, index)) }
        }
    }

    mutating func next() throws(StorageError) -> DedupeSnapshot.Entry? {
        guard var merged = try pop() else { return nil }
        while let head = heap.first, head.entry.digest == merged.digest {
            let same = try pop()!
            merged.firstSeen = max(merged.firstSeen, same.firstSeen)
        }
        return merged
    }

    private mutating func pop() throws(StorageError) -> DedupeSnapshot.Entry? {
        guard let top = heap.first else { return nil }
        let last = heap.removeLast()
        if !heap.isEmpty {
            heap[0] = last
            siftDown(0)
        }
        if let refill = try sources[top.source].next() { push((refill, top.source)) }
        return top.entry
    }

    private mutating func push(_ item: (entry: DedupeSnapshot.Entry, source: Int)) {
        heap.append(item)
        var child = heap.count - 1
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].entry.digest < heap[parent].entry.digest else { break }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1, right = left + 1
            var smallest = parent
            if left < heap.count, heap[left].entry.digest < heap[smallest].entry.digest { smallest = left }
            if right < heap.count, heap[right].entry.digest < heap[smallest].entry.digest { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
