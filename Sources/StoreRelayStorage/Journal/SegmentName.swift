/// Segment file names: `<20-digit zero-padded sequence>.log`, so a plain sort is sequence
/// order and operators can see the order with `ls`.
enum SegmentName {
    static let suffix = ".log"

    static func fileName(_ sequence: UInt64) -> String {
        let digits = String(sequence)
        return String(repeating: "0", count: 20 - digits.count) + digits + suffix
    }

    static func path(_ sequence: UInt64, in directory: String) -> String {
        directory + "/" + fileName(sequence)
    }

    /// The sequence of a segment file name, or nil for any other file (forensic copies,
    /// the dedupe snapshot, strays).
    static func sequence(of name: String) -> UInt64? {
        guard name.utf8.count == 20 + suffix.utf8.count, name.hasSuffix(suffix) else { return nil }
        let digits = name.utf8.prefix(20)
        guard digits.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        return UInt64(String(decoding: digits, as: UTF8.self))
    }
}
