/// A Bloom filter over event-id digests: "certainly not seen" for almost every new id, in
/// about 10 bits an id, so the retired ids themselves can stay on disk.
///
/// Digests are already uniform (SHA-256 prefixes), so the `k` probe positions come from the
/// digest's two halves by double hashing (Kirsch–Mitzenmacher) rather than from more hashing.
/// Ten bits an id and seven probes give about 1 % false positives at capacity; a false
/// positive costs one small read of `seen-ids`, never a wrong answer.
struct DigestBloomFilter: Sendable {
    static let bitsPerID = 10
    static let probes: UInt64 = 7

    private var words: [UInt64]
    private let bitCount: UInt64
    /// Ids it was sized for; beyond that the false-positive rate climbs.
    let capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 1024)
        let bits = UInt64(self.capacity * Self.bitsPerID)
        words = [UInt64](repeating: 0, count: Int((bits + 63) / 64))
        bitCount = UInt64(words.count) * 64
    }

    /// A filter saved with `storage`, `capacity` and `count` (nil when they do not agree).
    init?(capacity: Int, count: Int, storage: [UInt64]) {
        guard capacity >= 1024, storage.count == (capacity * Self.bitsPerID + 63) / 64 else { return nil }
        self.capacity = capacity
        self.count = count
        words = storage
        bitCount = UInt64(storage.count) * 64
    }

    /// The filter's bits, for saving it.
    var storage: [UInt64] { words }

    mutating func insert(_ digest: EventIDDigest) {
        var position = digest.high % bitCount
        let step = (digest.low % bitCount) | 1
        for _ in 0..<Self.probes {
            words[Int(position >> 6)] |= 1 << (position & 63)
            position = (position &+ step) % bitCount
        }
        count += 1
    }

    func mightContain(_ digest: EventIDDigest) -> Bool {
        var position = digest.high % bitCount
        let step = (digest.low % bitCount) | 1
        for _ in 0..<Self.probes {
            guard words[Int(position >> 6)] & (1 << (position & 63)) != 0 else { return false }
            position = (position &+ step) % bitCount
        }
        return true
    }

    /// Whether it holds more ids than it was sized for (its false positives then climb past
    /// 1 %), so it should be rebuilt.
    var isOverfull: Bool { count > capacity }

    /// Bytes of memory its bits take.
    var byteCount: Int { words.count * 8 }
}
