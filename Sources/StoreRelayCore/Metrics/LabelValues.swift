/// The label values of one series, compared and hashed by their UTF-8 bytes.
///
/// Swift's `String` equality is canonical equivalence, so `"é"` precomposed and `"e\u{301}"`
/// would be one dictionary key; in Prometheus they are two series. Label values come from the
/// outside world (destination names, environments), so they are kept byte for byte. Wrapping
/// the caller's array allocates nothing.
struct LabelValues: Hashable, Sendable {
    let values: [String]

    init(_ values: [String]) { self.values = values }

    static func == (lhs: LabelValues, rhs: LabelValues) -> Bool {
        guard lhs.values.count == rhs.values.count else { return false }
        for (left, right) in zip(lhs.values, rhs.values) where !left.utf8.elementsEqual(right.utf8) {
            return false
        }
        return true
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(values.count)
        for value in values {
            // The length keeps ["ab", "c"] and ["a", "bc"] apart.
            hasher.combine(value.utf8.count)
            let hashed: Void? = value.utf8.withContiguousStorageIfAvailable { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
            if hashed == nil {
                for byte in value.utf8 { hasher.combine(byte) }
            }
        }
    }

    /// Byte-wise lexicographic order, value by value: the stable sample order of a scrape.
    static func precedes(_ lhs: LabelValues, _ rhs: LabelValues) -> Bool {
        for (left, right) in zip(lhs.values, rhs.values) {
            if left.utf8.elementsEqual(right.utf8) { continue }
            return left.utf8.lexicographicallyPrecedes(right.utf8)
        }
        return lhs.values.count < rhs.values.count
    }
}
