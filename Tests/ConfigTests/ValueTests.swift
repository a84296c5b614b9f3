import Testing
@testable import StoreRelayConfig

/// Sizes, durations, numbers and their edge cases, directly and through the parser.
@Suite struct ValueTests {
    @Test(arguments: [
        ("0", 0), ("512", 512), ("512B", 512), ("1KiB", 1024), ("64KiB", 65536), ("1MiB", 1 << 20),
        ("2GiB", 2 << 30), ("8589934591GiB", 8589934591 << 30),
    ])
    func sizes(text: String, bytes: Int) throws {
        #expect(try ConfigValue.size(text) == bytes)
    }

    @Test(arguments: [
        ("1.5MiB", "unknown size unit '.5MiB'"), ("-1", "negative"), ("-1KiB", "negative"), ("10KB", "unknown size unit 'KB'"),
        ("10kib", "unknown size unit"), ("MiB", "not a size"), ("", "not a size"), ("8589934592GiB", "too large"),
        ("99999999999999999999", "too large"), ("9223372036854775808", "too large"), ("1 MiB", "unknown size unit"),
    ])
    func invalidSizes(text: String, fragment: String) {
        #expect(throws: ConfigValueError.self) { try ConfigValue.size(text) }
        do { _ = try ConfigValue.size(text) } catch { #expect(error.message.contains(fragment), "\(error.message)") }
    }

    @Test(arguments: [
        ("0ms", 0), ("500ms", 500), ("10s", 10_000), ("5m", 300_000), ("1h", 3_600_000), ("3d", 259_200_000),
        ("1h30m", 5_400_000), ("1m500ms", 60_500), ("106751991167d", 106751991167 * 86_400_000),
    ] as [(String, Int64)])
    func durations(text: String, milliseconds: Int64) throws {
        let duration = try ConfigValue.duration(text)
        #expect(duration == .milliseconds(milliseconds))
        #expect(duration.wholeMilliseconds == milliseconds)
    }

    @Test(arguments: [
        ("10", "needs a unit"), ("-5s", "negative"), ("10x", "unknown duration unit 'x'"), ("1.5s", "unknown duration unit '.'"),
        ("s", "not a duration"), ("", "empty duration"), ("106751991168d", "too large"), ("9223372036854775808ms", "too large"),
        ("99999999999999999999999s", "too large"), ("10S", "unknown duration unit 'S'"), ("1h 1m", "unknown duration unit"),
        ("5000000000000000h5000000000000000h", "too large"),
    ])
    func invalidDurations(text: String, fragment: String) {
        do {
            _ = try ConfigValue.duration(text)
            Issue.record("'\(text)' should not parse")
        } catch {
            #expect(error.message.contains(fragment), "\(error.message)")
        }
    }

    @Test func integers() throws {
        #expect(try ConfigValue.integer("42", in: 1...100) == 42)
        #expect(throws: ConfigValueError.self) { try ConfigValue.integer("+42", in: 1...100) }
        #expect(throws: ConfigValueError.self) { try ConfigValue.integer("4_2", in: 1...100) }
        #expect(throws: ConfigValueError.self) { try ConfigValue.integer("101", in: 1...100) }
        #expect(throws: ConfigValueError.self) { try ConfigValue.integer("18446744073709551616", in: 1...Int.max) }
        #expect(try ConfigValue.integer("9223372036854775807", in: 1...Int.max) == Int.max)
        #expect(throws: ConfigValueError.self) { try ConfigValue.integer("9223372036854775808", in: 1...Int.max) }
    }

    @Test func formattingRoundTrips() throws {
        for text in ["512", "64KiB", "1MiB", "2GiB", "1025"] {
            #expect(ConfigFormat.size(try ConfigValue.size(text)) == text)
        }
        for text in ["500ms", "10s", "5m", "1h", "3d", "1001ms"] {
            #expect(ConfigFormat.duration(try ConfigValue.duration(text)) == text)
        }
        #expect(ConfigFormat.duration(try ConfigValue.duration("72h")) == "3d")
        #expect(ConfigFormat.duration(try ConfigValue.duration("1h30m")) == "90m")
    }

    @Test func sizeAndDurationErrorsThroughTheParser() {
        expectError("max-body 10KB\n", .invalidValue, line: 1, column: 10, containing: "invalid max-body: unknown size unit 'KB' in '10KB' (expected KiB, MiB or GiB)")
        expectError("max-body -1\n", .invalidValue, line: 1, column: 10, containing: "negative")
        expectError("max-body 0\n", .invalidValue, line: 1, column: 10, containing: "zero")
        expectError("max-body 99999999999GiB\n", .invalidValue, line: 1, column: 10, containing: "too large")
        expectError("read-timeout 10\n", .invalidValue, line: 1, column: 14, containing: "needs a unit")
        expectError("idle-timeout 9999999999999999999d\n", .invalidValue, line: 1, column: 14, containing: "too large")
        expectError("destination q file ./q {\n rotate 64MiB forever\n}\n", .invalidValue, line: 2, column: 15, containing: "rotate interval")
    }

    @Test func listenAddresses() throws {
        #expect(try ListenAddress.parseListen("0.0.0.0:8080") == ListenAddress(host: "0.0.0.0", port: 8080, kind: .ipv4))
        #expect(try ListenAddress.parseListen("[::]:0") == ListenAddress(host: "::", port: 0, kind: .ipv6))
        #expect(try ListenAddress.parseListen("[fe80::1:2]:443").host == "fe80::1:2")
        #expect(try ListenAddress.parseListen("gateway-1.example.com:80").kind == .hostname)
        for bad in ["0.0.0.0", "1.2.3:80", "1.2.3.4.5:80", "01234.1.1.1:1", ":80", "[::1]80", "[::1", "host:-1", "host:", "-host:1", "a..b:1", "h_st:1"] {
            #expect(throws: ConfigValueError.self, "\(bad)") { try ListenAddress.parseListen(bad) }
        }
    }
}
