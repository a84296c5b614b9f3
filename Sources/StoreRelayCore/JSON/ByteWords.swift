/// Tests on eight bytes at once (one `UInt64`), for the scanners that skip long runs of
/// ordinary bytes: App Store payloads are mostly base64 text tens of kilobytes long.
///
/// The classic "has a zero byte" test, `(x - 0x01…) & ~x & 0x80…`: a borrow can flag a byte
/// above a real match, never a word without one, so "any byte" is exact.
enum ByteWords {
    static let ones: UInt64 = 0x0101_0101_0101_0101
    static let highBits: UInt64 = 0x8080_8080_8080_8080

    /// High bit set in a byte position (and possibly above it) when a byte of `word` is `byte`.
    @inline(__always)
    static func matches(_ word: UInt64, _ byte: UInt8) -> UInt64 {
        let x = word ^ (ones &* UInt64(byte))
        return (x &- ones) & ~x & highBits
    }

    /// High bit set when a byte of `word` is below `limit` (at most 0x80).
    @inline(__always)
    static func below(_ word: UInt64, _ limit: UInt8) -> UInt64 {
        (word &- ones &* UInt64(limit)) & ~word & highBits
    }

    /// The eight bytes at `offset` of `base`, unaligned.
    @inline(__always)
    static func load(_ base: UnsafePointer<UInt8>, _ offset: Int) -> UInt64 {
        UnsafeRawPointer(base).loadUnaligned(fromByteOffset: offset, as: UInt64.self)
    }
}
