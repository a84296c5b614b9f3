/// One word of a configuration line after quoting and `${NAME}` substitution.
struct ConfigToken: Sendable, Hashable {
    /// The value, quotes removed and variables substituted.
    var text: String
    /// 1-based line of the token.
    var line: Int
    /// 1-based column of the token's first character in the source.
    var column: Int
    /// Column just past the token in the source, where a missing next word would go.
    var endColumn: Int
    /// Written bare, without quotes or substitution: only plain tokens can be syntax
    /// (`{`, `}`, `->`), so a quoted `"{"` or a variable holding `}` stays a value.
    var isPlain: Bool

    /// Whether this is the syntax word `word` (plain, same text).
    func isSyntax(_ word: String) -> Bool { isPlain && text == word }
}

/// The tokens of one source line.
struct ConfigLine: Sendable {
    /// 1-based line number.
    var number: Int
    /// The words of the line, comments removed.
    var tokens: [ConfigToken]
    /// The lexer reported an error on this line: the parser then only follows its block
    /// structure, so one typo gives one error rather than a cascade.
    var isDamaged: Bool
}
