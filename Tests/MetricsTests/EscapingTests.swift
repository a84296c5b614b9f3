import Testing
@testable import StoreRelayCore

/// Label values and help text come from the outside world; the format's escaping must hold.
@Suite struct EscapingTests {
    @Test func labelValuesEscapeBackslashQuoteAndNewlineOnly() {
        let registry = MetricsRegistry()
        let counter = registry.counter("hostile_total", help: "H.", labels: ["destination"])
        counter.increment([#"a"b"#])
        counter.increment([#"c:\path\"#])
        counter.increment(["line1\nline2"])
        counter.increment([#"\n is not a newline"#])
        counter.increment(["</script><script>alert(\"x\")</script>"])
        counter.increment(["tab\tcr\r é e\u{301} 🦄 שלום"])
        counter.increment([""])
        let expected = [
            "# HELP hostile_total H.",
            "# TYPE hostile_total counter",
            #"hostile_total{destination=""} 1"#,
            #"hostile_total{destination="</script><script>alert(\"x\")</script>"} 1"#,
            #"hostile_total{destination="\\n is not a newline"} 1"#,
            #"hostile_total{destination="a\"b"} 1"#,
            #"hostile_total{destination="c:\\path\\"} 1"#,
            #"hostile_total{destination="line1\nline2"} 1"#,
            "hostile_total{destination=\"tab\tcr\r é e\u{301} 🦄 שלום\"} 1",
        ]
        #expect(Array(registry.render().utf8) == Array((expected.joined(separator: "\n") + "\n").utf8))
    }

    @Test func helpEscapesBackslashAndNewlineButNotQuotes() {
        let registry = MetricsRegistry()
        _ = registry.gauge("documented", help: "Path \\ \"quoted\"\nsecond line")
        #expect(registry.render().hasPrefix(#"# HELP documented Path \\ "quoted"\nsecond line"# + "\n"))
    }

    @Test func canonicallyEquivalentValuesStayDistinctSeries() {
        let registry = MetricsRegistry()
        let counter = registry.counter("unicode_total", help: "U.", labels: ["name"])
        counter.increment(["\u{e9}"])
        counter.increment(["e\u{301}"], by: 2)
        #expect(counter.value(["\u{e9}"]) == 1)
        #expect(counter.value(["e\u{301}"]) == 2)
        let lines = registry.render().split(separator: "\n").filter { $0.hasPrefix("unicode_total{") }
        // Byte order: "e" (0x65) sorts before "é" (0xC3 0xA9).
        #expect(lines.map { Array($0.utf8) } == [
            Array("unicode_total{name=\"e\u{301}\"} 2".utf8),
            Array("unicode_total{name=\"\u{e9}\"} 1".utf8),
        ])
    }

    @Test func labelValuesThatLookLikeSyntaxAreKeptApart() {
        // Without the length in the hash and byte comparison per value these could merge.
        let registry = MetricsRegistry()
        let counter = registry.counter("pairs_total", help: "P.", labels: ["a", "b"])
        counter.increment(["ab", "c"])
        counter.increment(["a", "bc"])
        counter.increment(["a\",b=\"", ""])
        #expect(counter.value(["ab", "c"]) == 1)
        #expect(counter.value(["a", "bc"]) == 1)
        #expect(registry.render().contains(#"pairs_total{a="a\",b=\"",b=""} 1"#))
    }
}
