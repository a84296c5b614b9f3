import StoreRelayCrypto

/// What the journal remembers of an event id once its segment is retired: the first 128 bits
/// of the id's SHA-256.
///
/// Retired ids are kept for the whole dedupe retention (30 days), so their size is what the
/// gateway's memory and its `seen-ids` file grow with: 16 bytes whatever the id, where a
/// `String` key of a 36-character UUID took a heap allocation of its own. Two different ids
/// share a digest with probability 2⁻¹²⁸ per pair, far below any disk's error rate.
struct EventIDDigest: Hashable, Sendable {
    static let byteCount = 16

    let high: UInt64
    let low: UInt64

    init(_ id: String) {
        let digest = SHA256.hash(Array(id.utf8))
        high = digest.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 0, as: UInt64.self) }
        low = digest.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 8, as: UInt64.self) }
    }

    init(high: UInt64, low: UInt64) {
        self.high = high
        self.low = low
    }
}
