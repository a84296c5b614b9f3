/// An open-addressing hash table from a search key's hash to the ordinals of the records
/// that hold the key: the open segment's index in memory, and, written out unchanged, a
/// sealed segment's index on disk (`EventIndexFile`), probed there with `pread`.
///
/// A key may be in many records (a subscription's renewals), so a hash is inserted once per
/// record and a probe collects every slot with it until an empty one. Hashes only point:
/// the record is read and its fields compared before it is an answer, so a collision costs
/// a read, never a wrong result. At most half the slots are used, so a probe reads a few
/// neighbouring slots however large the table.
struct EventKeyTable: Sendable {
    /// Bytes per slot on disk: `[u64 LE hash][u32 LE ordinal][u32 zero]`.
    static let slotSize = 16
    private(set) var hashes: [UInt64]
    private(set) var ordinals: [UInt32]
    private(set) var count = 0

    init(capacity: Int = 1024) {
        let slots = Self.slotCount(for: capacity)
        hashes = [UInt64](repeating: 0, count: slots)
        ordinals = [UInt32](repeating: 0, count: slots)
    }

    /// A power of two at least twice `entries` (and at least 16).
    static func slotCount(for entries: Int) -> Int {
        var slots = 16
        while slots < entries * 2 { slots <<= 1 }
        return slots
    }

    /// FNV-1a over the key's UTF-8, then a 64-bit finalizer so the low bits (the slot) mix
    /// well; never 0, which marks an empty slot. Stable across runs: it is stored on disk.
    static func hash(_ key: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        hash ^= hash >> 33
        hash &*= 0xff51_afd7_ed55_8ccd
        hash ^= hash >> 33
        return hash == 0 ? 1 : hash
    }

    mutating func insert(_ key: String, ordinal: UInt32) {
        if (count + 1) * 2 > hashes.count { grow() }
        place(Self.hash(key), ordinal)
        count += 1
    }

    /// The ordinals of the records that may hold `key`.
    func candidates(_ key: String) -> [UInt32] {
        let hash = Self.hash(key)
        let mask = hashes.count - 1
        var slot = Int(hash & UInt64(mask))
        var found: [UInt32] = []
        while hashes[slot] != 0 {
            if hashes[slot] == hash { found.append(ordinals[slot]) }
            slot = (slot + 1) & mask
        }
        return found
    }

    /// The slots as `EventIndexFile` stores them.
    func serialized() -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(hashes.count * Self.slotSize)
        for slot in 0..<hashes.count {
            out.appendLittleEndian(hashes[slot])
            out.appendLittleEndian(ordinals[slot])
            out.appendLittleEndian(UInt32(0))
        }
        return out
    }

    private mutating func place(_ hash: UInt64, _ ordinal: UInt32) {
        let mask = hashes.count - 1
        var slot = Int(hash & UInt64(mask))
        while hashes[slot] != 0 { slot = (slot + 1) & mask }
        hashes[slot] = hash
        ordinals[slot] = ordinal
    }

    private mutating func grow() {
        let old = (hashes, ordinals)
        hashes = [UInt64](repeating: 0, count: old.0.count * 2)
        ordinals = [UInt32](repeating: 0, count: old.0.count * 2)
        for slot in 0..<old.0.count where old.0[slot] != 0 { place(old.0[slot], old.1[slot]) }
    }
}
