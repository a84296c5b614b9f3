/// The lines of an input as an editor shows them, to check error positions against.
///
/// Written independently of the parser's own line splitting, from the format's rules: lines
/// end at LF (a CR before it is not part of the line), columns count Unicode scalars, each
/// invalid UTF-8 sequence shows as one U+FFFD, and a byte order mark at the very start is
/// not text. The BOM is counted in the length anyway (one more column allowed on line 1):
/// that slack hides nothing but an off-by-one on a line that starts with a BOM.
struct SourceLines {
    private var lengths: [Int] = []

    init(_ bytes: [UInt8]) {
        var start = 0
        for (index, byte) in bytes.enumerated() where byte == UInt8(ascii: "\n") {
            lengths.append(Self.length(bytes[start..<index]))
            start = index + 1
        }
        if start < bytes.count { lengths.append(Self.length(bytes[start...])) }
    }

    var count: Int { lengths.count }

    /// Unicode scalars on 1-based line `number`, nil when there is no such line.
    func length(ofLine number: Int) -> Int? {
        lengths.indices.contains(number - 1) ? lengths[number - 1] : nil
    }

    private static func length(_ line: ArraySlice<UInt8>) -> Int {
        let text = line.last == UInt8(ascii: "\r") ? line.dropLast() : line
        return String(decoding: text, as: UTF8.self).unicodeScalars.count
    }
}
