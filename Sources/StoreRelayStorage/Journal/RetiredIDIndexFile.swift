#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// `seen-ids.index`: the in-memory part of `RetiredIDIndex` (the Bloom filter and each
/// chunk's fences) saved next to `seen-ids`, so an open loads about 1.4 MB per million
/// remembered ids instead of reading and hashing all of them: a restart's cost no longer
/// grows with how many ids the gateway remembers.
///
/// It names the `seen-ids` it describes by length and by the checksum of its last chunk; one
/// that does not match (stale after a crash, torn, or from another file) is ignored and the
/// file scanned as before. Written through a rename, without a sync: losing it costs a scan.
///
/// Layout (little-endian): "SRSX", u32 version 1, u64 described length, u32 last chunk CRC,
/// u64 count, i64 oldest first-seen (Int64.min: none), u32 appended chunks, u64 filter
/// capacity, u64 filter count, u64 word count, words, u32 chunk count, each chunk (u64
/// entries offset, u64 count, 4 × u64 first and last digests, u32 fence count, fences), and
/// the CRC-32C of everything before it.
enum RetiredIDIndexFile {
    static let fileName = "seen-ids.index"
    private static let magic = Array("SRSX".utf8)

    static func encode(_ index: RetiredIDIndex, length: Int, lastChecksum: UInt32) -> [UInt8] {
        var out = magic
        out.reserveCapacity(64 + index.filter.storage.count * 8 + index.chunks.reduce(0) { $0 + 52 + $1.fences.count * 8 })
        out.appendLittleEndian(UInt32(1))
        out.appendLittleEndian(UInt64(length))
        out.appendLittleEndian(lastChecksum)
        out.appendLittleEndian(UInt64(index.count))
        out.appendLittleEndian(index.oldestFirstSeen ?? Int64.min)
        out.appendLittleEndian(UInt32(index.appendedChunks))
        out.appendLittleEndian(UInt64(index.filter.capacity))
        out.appendLittleEndian(UInt64(index.filter.count))
        out.appendLittleEndian(UInt64(index.filter.storage.count))
        for word in index.filter.storage { out.appendLittleEndian(word) }
        out.appendLittleEndian(UInt32(index.chunks.count))
        for chunk in index.chunks {
            out.appendLittleEndian(UInt64(chunk.entriesOffset))
            out.appendLittleEndian(UInt64(chunk.count))
            for half in [chunk.first.high, chunk.first.low, chunk.last.high, chunk.last.low] { out.appendLittleEndian(half) }
            out.appendLittleEndian(UInt32(chunk.fences.count))
            for fence in chunk.fences { out.appendLittleEndian(fence) }
        }
        let checksum = out.withUnsafeBytes { RecordFrame.checksum($0) }
        out.appendLittleEndian(checksum)
        return out
    }

    /// What a saved index holds, if `bytes` are one, whole and checksummed.
    struct Saved {
        var length: Int
        var lastChecksum: UInt32
        var count: Int
        var oldestFirstSeen: Int64?
        var appendedChunks: Int
        var filter: DigestBloomFilter
        var chunks: [RetiredIDIndex.Chunk]
    }

    static func decode(_ bytes: [UInt8]) -> Saved? {
        guard bytes.count >= 12, Array(bytes[0..<4]) == magic else { return nil }
        let body = bytes.count - 4
        let expected = bytes.withUnsafeBytes { RecordFrame.checksum(UnsafeRawBufferPointer(rebasing: $0[0..<body])) }
        return bytes.withUnsafeBytes { raw -> Saved? in
            guard raw.littleEndian(at: body, as: UInt32.self) == expected else { return nil }
            var offset = 4
            func next<T: FixedWidthInteger>(_: T.Type) -> T? {
                guard offset + MemoryLayout<T>.size <= body else { return nil }
                defer { offset += MemoryLayout<T>.size }
                return raw.littleEndian(at: offset, as: T.self)
            }
            guard next(UInt32.self) == 1, let length = next(UInt64.self), let lastChecksum = next(UInt32.self),
                  let count = next(UInt64.self), let oldest = next(Int64.self), let appended = next(UInt32.self),
                  let capacity = next(UInt64.self), let filterCount = next(UInt64.self), let wordCount = next(UInt64.self),
                  wordCount <= UInt64(body - offset) / 8 else { return nil }
            var words: [UInt64] = []
            words.reserveCapacity(Int(wordCount))
            for _ in 0..<wordCount { words.append(next(UInt64.self)!) }
            guard let filter = DigestBloomFilter(capacity: Int(capacity), count: Int(filterCount), storage: words),
                  let chunkCount = next(UInt32.self) else { return nil }
            var chunks: [RetiredIDIndex.Chunk] = []
            for _ in 0..<chunkCount {
                guard let entriesOffset = next(UInt64.self), let entries = next(UInt64.self),
                      let firstHigh = next(UInt64.self), let firstLow = next(UInt64.self),
                      let lastHigh = next(UInt64.self), let lastLow = next(UInt64.self),
                      let fenceCount = next(UInt32.self), UInt64(fenceCount) <= UInt64(body - offset) / 8 else { return nil }
                let fences = (0..<fenceCount).map { _ in next(UInt64.self)! }
                chunks.append(RetiredIDIndex.Chunk(entriesOffset: Int(entriesOffset), count: Int(entries),
                                                   first: EventIDDigest(high: firstHigh, low: firstLow),
                                                   last: EventIDDigest(high: lastHigh, low: lastLow), fences: fences))
            }
            guard offset == body else { return nil }
            return Saved(length: Int(length), lastChecksum: lastChecksum, count: Int(count),
                         oldestFirstSeen: oldest == Int64.min ? nil : oldest, appendedChunks: Int(appended),
                         filter: filter, chunks: chunks)
        }
    }

    /// The checksum stored at the end of the file's last chunk (0 for a file of no chunk).
    static func lastChecksum(of file: Int32, length: Int, path: String) throws(StorageError) -> UInt32 {
        guard length > DedupeSnapshot.headerSize else { return 0 }
        var bytes = [UInt8](repeating: 0, count: 4)
        let got = try bytes.withMutableBytes { (raw) throws(StorageError) in
            try JournalFiles.read(file, into: raw, at: length - 4, path: path)
        }
        guard got == 4 else { return 0 }
        return bytes.withUnsafeBytes { $0.littleEndian(at: 0, as: UInt32.self) }
    }

    /// Saves `index`, which describes `length` bytes of `seen-ids`.
    static func save(_ index: RetiredIDIndex, length: Int, directory: String) throws(StorageError) {
        let seen = directory + "/" + DedupeSnapshot.fileName
        let fd = try JournalFiles.openFile(seen, O_RDONLY)
        defer { close(fd) }
        let checksum = try lastChecksum(of: fd, length: length, path: seen)
        let path = directory + "/" + fileName
        try JournalFiles.removeFile(path + ".tmp")
        let out = try JournalFiles.openFile(path + ".tmp", O_WRONLY | O_CREAT | O_EXCL)
        defer { close(out) }
        try JournalFiles.writeAll(out, encode(index, length: length, lastChecksum: checksum), at: 0, path: path + ".tmp")
        try JournalFiles.renameFile(path + ".tmp", path)
    }

    /// The index saved for `seen-ids` as it is now (`length` bytes read through `file`),
    /// or nil when there is none that matches it (or the file's header is not ours).
    static func load(directory: String, file: ReadOnlyFile, length: Int) -> RetiredIDIndex? {
        let path = directory + "/" + fileName
        var header = [UInt8](repeating: 0, count: DedupeSnapshot.headerSize)
        let got = try? header.withMutableBytes { (raw) throws(StorageError) in
            try JournalFiles.read(file.descriptor, into: raw, at: 0, path: file.path)
        }
        guard got == header.count, header == DedupeSnapshot.header(),
              JournalFiles.isRegularFile(path), let bytes = try? JournalFiles.readAll(path),
              let saved = decode(bytes), saved.length == length,
              let checksum = try? lastChecksum(of: file.descriptor, length: length, path: file.path),
              checksum == saved.lastChecksum,
              saved.chunks.allSatisfy({ $0.entriesOffset + $0.count * DedupeSnapshot.entrySize <= length }) else { return nil }
        return RetiredIDIndex(chunks: saved.chunks, appendedChunks: saved.appendedChunks, filter: saved.filter,
                              count: saved.count, oldestFirstSeen: saved.oldestFirstSeen, file: saved.chunks.isEmpty ? nil : file)
    }
}
