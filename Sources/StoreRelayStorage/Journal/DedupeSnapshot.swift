#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The durable memory of event ids whose segments were retired: `seen-ids` in the journal
/// directory, so duplicate detection outlives the segments themselves.
///
/// Layout (version 2): magic `SRSI`, version (u32 LE), then chunks, one per retirement:
/// entry count (u32 LE), entries of `[id digest: 16 bytes][first-seen ms i64 LE]`, CRC-32
/// (u32 LE) of the count and entries. A retirement appends its chunk and syncs it before any
/// segment is deleted, so the cost of retiring follows the ids retired, not the ids
/// remembered; `compact` rewrites the file atomically without expired entries. A chunk cut
/// short by a crash is the last one, and its ids still sit in their undeleted segments.
///
/// Version 1 (a whole rewrite per retirement, ids as text) is still read, and replaced by a
/// version 2 file when the journal opens.
enum DedupeSnapshot {
    static let fileName = "seen-ids"
    static let temporaryName = "seen-ids.tmp"
    static let magic: [UInt8] = Array("SRSI".utf8)
    static let version: UInt32 = 2
    static let headerSize = 8
    static let entrySize = EventIDDigest.byteCount + 8

    typealias Entry = (digest: EventIDDigest, firstSeen: Int64)

    /// What a `seen-ids` file holds.
    struct Contents {
        /// In file order (oldest chunks first).
        var entries: [Entry]
        /// Bytes up to the end of the last chunk read; anything after it is a torn tail.
        var intactLength: Int
        /// A damaged chunk with more chunks after it was skipped: not what a crash leaves
        /// (only the last chunk can be torn), so the file is damaged.
        var skippedDamage = false
        /// A version 1 file: to be rewritten in the current layout.
        var isOldVersion = false
    }

    static func header() -> [UInt8] {
        var out = magic
        out.appendLittleEndian(version)
        return out
    }

    /// One chunk, its entries sorted by digest (`RetiredIDIndex` searches them), unless the
    /// caller says they are already.
    static func chunk(_ unordered: [Entry], sorted: Bool = false) -> [UInt8] {
        let entries = sorted ? unordered : unordered.sorted { $0.digest < $1.digest }
        var out: [UInt8] = []
        out.reserveCapacity(8 + entries.count * entrySize)
        out.appendLittleEndian(UInt32(entries.count))
        for entry in entries {
            out.appendLittleEndian(entry.digest.high)
            out.appendLittleEndian(entry.digest.low)
            out.appendLittleEndian(UInt64(bitPattern: entry.firstSeen))
        }
        let crc = out.withUnsafeBytes { RecordFrame.checksum($0) }
        out.appendLittleEndian(crc)
        return out
    }

    /// The file's entries, or nil when its header is not one this code wrote (or a version 1
    /// file fails its checksum): then nothing in it can be trusted.
    static func decode(_ bytes: [UInt8]) -> Contents? {
        guard bytes.count >= headerSize, Array(bytes[0..<4]) == magic else { return nil }
        switch bytes.withUnsafeBytes({ $0.littleEndian(at: 4, as: UInt32.self) }) {
        case 1: return decodeVersion1(bytes).map { Contents(entries: $0, intactLength: bytes.count, isOldVersion: true) }
        case version: return decodeChunks(bytes)
        default: return nil
        }
    }

    /// Chunks in order. A chunk that fails its checksum but whose length leaves more data
    /// after it is skipped, and reading goes on; one that runs to or past the end of the file
    /// ends it (a torn append).
    private static func decodeChunks(_ bytes: [UInt8]) -> Contents {
        bytes.withUnsafeBytes { raw in
            var entries: [Entry] = []
            var offset = headerSize
            var skippedDamage = false
            while offset + 8 <= raw.count {
                let count = Int(raw.littleEndian(at: offset, as: UInt32.self))
                let end = offset + 4 + count * entrySize
                guard count > 0, end + 4 <= raw.count else { break }
                guard RecordFrame.checksum(UnsafeRawBufferPointer(rebasing: raw[offset..<end]))
                        == raw.littleEndian(at: end, as: UInt32.self)
                else {
                    guard end + 4 + 8 <= raw.count else { break }
                    skippedDamage = true
                    offset = end + 4
                    continue
                }
                var cursor = offset + 4
                for _ in 0..<count {
                    let digest = EventIDDigest(high: raw.littleEndian(at: cursor), low: raw.littleEndian(at: cursor + 8))
                    entries.append((digest, Int64(bitPattern: raw.littleEndian(at: cursor + 16, as: UInt64.self))))
                    cursor += entrySize
                }
                offset = end + 4
            }
            return Contents(entries: entries, intactLength: offset, skippedDamage: skippedDamage)
        }
    }

    /// Version 1: entry count (u64 LE), entries of `[first-seen i64][id length u16][id]`,
    /// CRC-32 of everything before it.
    private static func decodeVersion1(_ bytes: [UInt8]) -> [Entry]? {
        bytes.withUnsafeBytes { raw -> [Entry]? in
            guard raw.count >= 20 else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 4)])
            guard RecordFrame.checksum(body) == raw.littleEndian(at: raw.count - 4, as: UInt32.self) else { return nil }
            let count = raw.littleEndian(at: 8, as: UInt64.self)
            var entries: [Entry] = []
            var offset = 16
            for _ in 0..<count {
                guard offset + 10 <= body.count else { return nil }
                let firstSeen = Int64(bitPattern: raw.littleEndian(at: offset, as: UInt64.self))
                let length = Int(raw.littleEndian(at: offset + 8, as: UInt16.self))
                offset += 10
                guard offset + length <= body.count,
                      let id = String(validating: raw[offset..<(offset + length)], as: UTF8.self) else { return nil }
                entries.append((EventIDDigest(id), firstSeen))
                offset += length
            }
            return offset == body.count ? entries : nil
        }
    }

    /// Writes one retirement's entries as a chunk at `length` (the end of the intact file:
    /// a failed earlier append left nothing that counts after it) and syncs them. Returns the
    /// new intact length.
    static func append(_ entries: [Entry], directory: String, at length: Int) throws(StorageError) -> Int {
        guard !entries.isEmpty else { return length }
        let path = directory + "/" + fileName
        let fd = try JournalFiles.openFile(path, O_WRONLY)
        defer { close(fd) }
        let bytes = chunk(entries)
        try JournalFiles.writeAll(fd, bytes, at: length, path: path)
        // Whatever an earlier failed append left past the intact end goes: it would read as
        // a torn tail, or as damage, at the next open.
        try JournalFiles.truncate(fd, to: length + bytes.count, path: path)
        try JournalFiles.syncData(fd, path: path)
        return length + bytes.count
    }
}
