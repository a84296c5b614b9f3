/// Splits one line of routes.conf into tokens: whitespace-separated words, `"..."` quoted
/// values, `#` comments and `${NAME}` substitution.
///
/// Rules, chosen so that values pasted from elsewhere survive intact:
/// - `#` starts a comment only where a word could start (line start or after whitespace), so a
///   `#` inside a word (a URL fragment, a secret) is kept and judged by the directive.
/// - `"..."` holds spaces; inside it only `\"` and `\\` are escapes.
/// - `${NAME}` is replaced by the variable's value verbatim, in bare and quoted words alike; the
///   value is never split or re-read, so a secret with spaces or `#` stays one value.
///   `$$` is a literal `$`; any other `$` is an error, so a typo cannot silently keep `$`.
/// - Control characters are errors, in the text and in substituted values (a trailing newline
///   in a secret would otherwise reach an HTTP header).
struct ConfigLexer {
    /// Variables available to `${NAME}`.
    let environment: [String: String]
    /// File name used in errors.
    let file: String

    private enum State { case between, bare, quoted }

    /// The tokens of `line`; errors are appended to `errors` and mark the line damaged.
    func tokenize(_ line: ConfigSource.Line, errors: inout [ConfigError]) -> ConfigLine {
        let s = line.scalars
        var tokens: [ConfigToken] = []
        var state = State.between
        var text = String.UnicodeScalarView()
        var start = 0
        var substituted = false
        var damaged = line.isDamaged
        var i = 0

        func report(_ index: Int, _ message: String, _ code: ConfigError.Code = .syntax) {
            errors.append(ConfigError(code: code, file: file, line: line.number, column: index + 1, message: message))
            damaged = true
        }
        func emit(end: Int, quoted: Bool) {
            tokens.append(ConfigToken(
                text: String(text), line: line.number, column: start + 1, endColumn: end + 1,
                isPlain: !quoted && !substituted))
        }
        /// Handles the `$` at `i`; returns the index after what it consumed.
        func substitute(at i: Int) -> Int {
            if i + 1 < s.count, s[i + 1] == "$" { text.append("$"); return i + 2 }
            guard i + 1 < s.count, s[i + 1] == "{" else {
                report(i, "a '$' must begin '${NAME}' or be doubled as '$$' for a literal '$'")
                return i + 1
            }
            guard let close = s[(i + 2)...].firstIndex(of: "}") else {
                report(i, "unterminated '${' (expected '}' after the variable name)")
                return s.count
            }
            let name = String(String.UnicodeScalarView(s[(i + 2)..<close]))
            guard Self.isVariableName(name) else {
                report(i + 2, "invalid variable name '\(name)' (expected letters, digits and '_', not starting with a digit)")
                return close + 1
            }
            guard let value = environment[name] else {
                report(i, "undefined variable '${\(name)}' (expected \(name) to be set in the environment)", .undefinedVariable)
                return close + 1
            }
            if value.unicodeScalars.contains(where: Self.isControl) {
                report(i, "variable '\(name)' contains a control character such as a newline (expected a single-line value)")
                return close + 1
            }
            text.append(contentsOf: value.unicodeScalars)
            substituted = true
            return close + 1
        }

        while i < s.count {
            let c = s[i]
            switch state {
            case .between:
                if c == " " || c == "\t" { i += 1; continue }
                if c == "#" { i = s.count; continue }
                start = i
                text = String.UnicodeScalarView()
                substituted = false
                if c == "\"" { state = .quoted; i += 1 } else { state = .bare }
            case .bare:
                if c == " " || c == "\t" {
                    emit(end: i, quoted: false)
                    state = .between
                    i += 1
                } else if c == "\"" {
                    report(i, "unexpected '\"' inside a value (expected the whole value in quotes)")
                    i += 1
                } else if c == "$" {
                    i = substitute(at: i)
                } else if Self.isControl(c) {
                    report(i, "unexpected control character U+\(Self.hex(c)) (expected printable text)")
                    i += 1
                } else {
                    text.append(c)
                    i += 1
                }
            case .quoted:
                if c == "\"" {
                    i += 1
                    emit(end: i, quoted: true)
                    state = .between
                    if i < s.count, s[i] != " ", s[i] != "\t" {
                        report(i, "expected a space after the closing quote")
                    }
                } else if c == "\\" {
                    if i + 1 < s.count, s[i + 1] == "\"" || s[i + 1] == "\\" {
                        text.append(s[i + 1])
                        i += 2
                    } else {
                        report(i, "unknown escape in quoted value (expected \\\" or \\\\)")
                        i += 1
                    }
                } else if c == "$" {
                    i = substitute(at: i)
                } else if Self.isControl(c) {
                    report(i, "unexpected control character U+\(Self.hex(c)) (expected printable text)")
                    i += 1
                } else {
                    text.append(c)
                    i += 1
                }
            }
        }
        switch state {
        case .between: break
        case .bare: emit(end: s.count, quoted: false)
        case .quoted:
            report(start, "unterminated quoted value (expected a closing '\"' on the same line)")
            emit(end: s.count, quoted: true)
        }
        return ConfigLine(number: line.number, tokens: tokens, isDamaged: damaged)
    }

    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, first == "_" || isASCIILetter(first) else { return false }
        return name.unicodeScalars.allSatisfy { $0 == "_" || isASCIILetter($0) || ("0"..."9").contains($0) }
    }

    static func isASCIILetter(_ c: Unicode.Scalar) -> Bool { ("a"..."z").contains(c) || ("A"..."Z").contains(c) }

    /// C0 controls (tab included: it is only whitespace between words) and DEL.
    static func isControl(_ c: Unicode.Scalar) -> Bool { c.value < 0x20 || c.value == 0x7F }

    private static func hex(_ c: Unicode.Scalar) -> String {
        let digits = String(c.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
