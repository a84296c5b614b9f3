internal import COpenSSL

/// Comparisons whose running time does not depend on where the inputs differ, for secrets,
/// MACs and passwords.
public enum ConstantTime {
    /// Whether `a` and `b` are equal. The time depends only on the lengths: different
    /// lengths still compare `a` with itself so the work is the same, then answer `false`.
    public static func equals(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard !a.isEmpty else { return b.isEmpty }
        let other = a.count == b.count ? b : a
        let same = a.withUnsafeBytes { x in
            other.withUnsafeBytes { y in CRYPTO_memcmp(x.baseAddress, y.baseAddress, a.count) == 0 }
        }
        return same && a.count == b.count
    }

    /// UTF-8 convenience for `equals(_:_:)`.
    public static func equals(_ a: String, _ b: String) -> Bool {
        equals(Array(a.utf8), Array(b.utf8))
    }
}
