#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StoreRelayCore

/// A sealed segment's index, `events-N.idx`, written once when the segment is sealed and
/// read with `pread` only, so neither its size nor the number of segments costs memory.
///
/// `[magic SREI][u32 LE version 1][u64 LE sequence][u32 LE record count][u32 LE slot count]
/// [i64 LE first receivedAt ms][i64 LE last receivedAt ms][u32 LE CRC-32 of the 40 bytes before]
/// [u32 zero]`, then each record's offset in the segment (u32 LE, in append order: what the
/// list walks backwards), then the `EventKeyTable` slots. Written through a temporary file
/// and a rename, so it is whole or absent; a missing or bad one is rebuilt from its segment.
enum EventIndexFile {
    static let magic: [UInt8] = Array("SREI".utf8)
    static let headerSize = 48
    /// Slots read per `pread` while probing: a probe at half load rarely goes further.
    static let slotsPerRead = 16

    static func encode(_ segment: SealedSegment, offsets: [UInt32], table: EventKeyTable) -> [UInt8] {
        var out = magic
        out.appendLittleEndian(UInt32(1))
        out.appendLittleEndian(segment.sequence)
        out.appendLittleEndian(UInt32(segment.recordCount))
        out.appendLittleEndian(UInt32(segment.slotCount))
        out.appendLittleEndian(segment.firstAt)
        out.appendLittleEndian(segment.lastAt)
        let crc = out.withUnsafeBytes { RecordFrame.checksum($0) }
        out.appendLittleEndian(crc)
        out.appendLittleEndian(UInt32(0))
        for offset in offsets { out.appendLittleEndian(offset) }
        out.append(contentsOf: table.serialized())
        return out
    }

    /// The segment an index describes, if `header` is one for segment `sequence` and the
    /// file is `fileSize` bytes as the header implies.
    static func decodeHeader(_ header: [UInt8], sequence: UInt64, fileSize: Int) -> SealedSegment? {
        guard header.count >= headerSize, Array(header[0..<4]) == magic else { return nil }
        return header.withUnsafeBytes { raw -> SealedSegment? in
            guard raw.littleEndian(at: 4, as: UInt32.self) == 1, raw.littleEndian(at: 8, as: UInt64.self) == sequence,
                  RecordFrame.checksum(UnsafeRawBufferPointer(rebasing: raw[0..<40])) == raw.littleEndian(at: 40, as: UInt32.self)
            else { return nil }
            let segment = SealedSegment(
                sequence: sequence, recordCount: Int(raw.littleEndian(at: 16, as: UInt32.self)),
                slotCount: Int(raw.littleEndian(at: 20, as: UInt32.self)),
                firstAt: raw.littleEndian(at: 24, as: Int64.self), lastAt: raw.littleEndian(at: 32, as: Int64.self))
            guard segment.slotCount > 0, segment.slotCount & (segment.slotCount - 1) == 0,
                  fileSize == headerSize + 4 * segment.recordCount + EventKeyTable.slotSize * segment.slotCount
            else { return nil }
            return segment
        }
    }

    /// The ordinals of the records of `segment` that may hold `key`, read from its open index `fd`.
    static func candidates(_ key: String, in segment: SealedSegment, fd: Int32, path: String) throws(StorageError) -> [UInt32] {
        let hash = EventKeyTable.hash(key)
        let mask = segment.slotCount - 1
        var slot = Int(hash & UInt64(mask))
        var found: [UInt32] = []
        var chunk = [UInt8](repeating: 0, count: slotsPerRead * EventKeyTable.slotSize)
        var probed = 0
        while probed < segment.slotCount {
            let run = min(slotsPerRead, segment.slotCount - slot)
            let at = segment.slotsOffset + slot * EventKeyTable.slotSize
            let read = try chunk.withMutableBytes { (raw) throws(StorageError) in
                try JournalFiles.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: raw[0..<(run * EventKeyTable.slotSize)]),
                                      at: at, path: path)
            }
            guard read == run * EventKeyTable.slotSize else { throw damaged(path) }
            let done = chunk.withUnsafeBytes { raw -> Bool in
                for index in 0..<run {
                    let slotHash = raw.littleEndian(at: index * EventKeyTable.slotSize, as: UInt64.self)
                    if slotHash == 0 { return true }
                    if slotHash == hash { found.append(raw.littleEndian(at: index * EventKeyTable.slotSize + 8, as: UInt32.self)) }
                }
                return false
            }
            if done { break }
            probed += run
            slot = (slot + run) & mask
        }
        return found
    }

    /// Record offsets `range` of `segment`, from its open index `fd`.
    static func offsets(_ range: Range<Int>, in segment: SealedSegment, fd: Int32, path: String) throws(StorageError) -> [UInt32] {
        guard !range.isEmpty else { return [] }
        var bytes = [UInt8](repeating: 0, count: range.count * 4)
        let read = try bytes.withMutableBytes { (raw) throws(StorageError) in
            try JournalFiles.read(fd, into: raw, at: headerSize + range.lowerBound * 4, path: path)
        }
        guard read == bytes.count else { throw damaged(path) }
        return bytes.withUnsafeBytes { raw in (0..<range.count).map { raw.littleEndian(at: $0 * 4, as: UInt32.self) } }
    }

    static func damaged(_ path: String) -> StorageError {
        StorageError(.corruptSegment, path: path, message: "event-log index \(path) is shorter than its header says")
    }
}
