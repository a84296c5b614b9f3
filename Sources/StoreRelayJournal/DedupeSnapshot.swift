/// The durable memory of event ids whose segments were retired: `seen-ids` in the journal
/// directory, so duplicate detection outlives the segments themselves.
///
/// Layout: magic `SRSI`, version (u32 LE), entry count (u64 LE), then per entry
/// `[first-seen ms i64 LE][id length u16 LE][id UTF-8]`, then a CRC-32 (u32 LE) of everything
/// before it. The file is replaced atomically (temp file, fsync, rename, directory fsync), so
/// a bad checksum means real damage, never a torn write.
enum DedupeSnapshot {
    static let fileName = "seen-ids"
    static let temporaryName = "seen-ids.tmp"
    static let magic: [UInt8] = Array("SRSI".utf8)
    static let version: UInt32 = 1

    static func encode(_ entries: [String: Int64]) -> [UInt8] {
        var out = magic
        out.appendLittleEndian(version)
        out.appendLittleEndian(UInt64(entries.count))
        for (id, firstSeen) in entries.sorted(by: { $0.key < $1.key }) {
            let idBytes = Array(id.utf8)
            out.appendLittleEndian(UInt64(bitPattern: firstSeen))
            out.appendLittleEndian(UInt16(idBytes.count))
            out.append(contentsOf: idBytes)
        }
        let crc = out.withUnsafeBytes { RecordFrame.checksum($0) }
        out.appendLittleEndian(crc)
        return out
    }

    /// The entries, or nil when the bytes are not an intact snapshot.
    static func decode(_ bytes: [UInt8]) -> [String: Int64]? {
        bytes.withUnsafeBytes { raw -> [String: Int64]? in
            guard raw.count >= 20, Array(raw[0..<4]) == magic,
                  raw.littleEndian(at: 4, as: UInt32.self) == version else { return nil }
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<(raw.count - 4)])
            guard RecordFrame.checksum(body) == raw.littleEndian(at: raw.count - 4, as: UInt32.self) else { return nil }
            let count = raw.littleEndian(at: 8, as: UInt64.self)
            var entries: [String: Int64] = [:]
            entries.reserveCapacity(Int(min(count, 1 << 24)))
            var offset = 16
            for _ in 0..<count {
                guard offset + 10 <= body.count else { return nil }
                let firstSeen = Int64(bitPattern: raw.littleEndian(at: offset, as: UInt64.self))
                let length = Int(raw.littleEndian(at: offset + 8, as: UInt16.self))
                offset += 10
                guard offset + length <= body.count,
                      let id = String(validating: raw[offset..<(offset + length)], as: UTF8.self) else { return nil }
                entries[id] = firstSeen
                offset += length
            }
            return offset == body.count ? entries : nil
        }
    }

    /// Replaces the snapshot atomically and durably.
    static func write(_ entries: [String: Int64], directory: String) throws(JournalError) {
        let temporary = directory + "/" + temporaryName
        try FileIO.writeFile(temporary, encode(entries))
        try FileIO.renameFile(temporary, directory + "/" + fileName)
        try FileIO.syncDirectory(directory)
    }
}
