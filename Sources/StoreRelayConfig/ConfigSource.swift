/// Splits configuration bytes into lines of Unicode scalars, reporting invalid UTF-8 where it is.
///
/// Decoding is done here, once, so that every later column is counted in scalars of the
/// text as an editor shows it, and arbitrary bytes (a fuzzer's, a corrupted file's) can never
/// reach the lexer as anything but well-formed scalars.
enum ConfigSource {
    /// One line of the file, without its line terminator.
    struct Line {
        var number: Int
        var scalars: [Unicode.Scalar]
        /// The line held invalid UTF-8 (already reported).
        var isDamaged = false
    }

    /// The lines of `bytes`; `\n` and `\r\n` both end a line. Each invalid UTF-8 sequence is
    /// replaced by U+FFFD and reported once per line.
    static func lines(_ bytes: [UInt8], file: String, errors: inout [ConfigError]) -> [Line] {
        var lines: [Line] = []
        var current: [Unicode.Scalar] = []
        var lineNumber = 1
        var reportedOnLine = false
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar == "\u{FEFF}", lineNumber == 1, current.isEmpty {
                    continue  // a byte order mark some editors write: not part of the text
                }
                if scalar == "\n" {
                    if current.last == "\r" { current.removeLast() }
                    lines.append(Line(number: lineNumber, scalars: current, isDamaged: reportedOnLine))
                    current = []
                    lineNumber += 1
                    reportedOnLine = false
                } else {
                    current.append(scalar)
                }
            case .error:
                if !reportedOnLine {
                    errors.append(ConfigError(
                        code: .syntax, file: file, line: lineNumber, column: current.count + 1,
                        message: "invalid UTF-8 byte sequence (expected UTF-8 text)"))
                    reportedOnLine = true
                }
                current.append("\u{FFFD}")
            case .emptyInput:
                break decoding
            }
        }
        if current.last == "\r" { current.removeLast() }
        if !current.isEmpty { lines.append(Line(number: lineNumber, scalars: current, isDamaged: reportedOnLine)) }
        return lines
    }
}
