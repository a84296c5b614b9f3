import Testing
import StoreRelayCore
@testable import StoreRelayConfig
import StoreRelayTestSupport

/// Thousands of mutated valid configurations: the parser must never trap, and must either
/// parse or give errors, sorted, each at a line and column that exist in the input.
@Suite struct FuzzTests {
    /// Valid inputs to mutate (they all parse with `parseForFuzzing`'s variables).
    static let seeds: [String] = [
        DefaultConfiguration.text,
        """
        listen [::1]:8443
        path /apple/prod production
        path "/apple/sandbox" sandbox
        admin localhost:0
        admin-token ${A}
        environments production sandbox xcode
        app com.acme.journal {
            apple-id 1234567890
            shared-secret "pa$$ ${A}"
        }
        destination billing webhook https://billing.internal:8443/appstore?x=1 {
            signing-secret ${SECRET}
            format apple
            include-raw yes
            header X-Team "billing team"
            timeout 2500ms
            concurrency 8
            max-attempts 3
            backoff 500ms 2m
            max-age 1d
        }
        destination ledger file ./data/queues/ledger {
            rotate 1GiB 30m
            compress gzip
        }
        route production com.acme.journal * -> billing, ledger
        route production,sandbox * REFUND, REVOKE/* -> billing
        route * * DID_RENEW/BILLING_RECOVERY -> ledger
        """,
        """
        destination stream redis-stream rediss://:p%40ss@cache:6380/2 {
            stream appstore:{environment}:{type}
            max-length 1000
            ca-file ./ca.pem
            timeout 2s
        }
        destination audit nats tls://[::1]:4222 {
            subject appstore.{environment}.{bundleId}.{type}
            user relay
            password ${A}
            format apple
        }
        route * * * -> stream, audit
        """,
    ]

    /// Fragments that reach the interesting states of the lexer and parser.
    static let dictionary: [String] = [
        "{", "}", "->", ",", "*", "#", "\"", "\\", "$", "$$", "${A}", "${SECRET}", "${EMPTY}", "${SPACE}", "${MISSING}",
        "\n", "\r\n", " ", "\t", "/", ":", "[", "]", "route ", "destination x webhook http://h/ {\n", "app a {\n",
        "destination y redis-stream redis://h/0 {\n", "destination z nats nats://h {\n", "{type}", "{enviroment}", ".*",
        "}\n", "9999999999999999999999", "-1", "0", "KiB", "GiB", "ms", "d", "é", "\u{0}", "whsec_", "=",
    ]

    @Test func mutatedConfigsNeverCrashAndReportValidPositions() {
        var generator = SeededGenerator(seed: 0x5EED_C0F1_6000_0001)
        var parsedCount = 0
        var failedCount = 0
        for iteration in 0..<4000 {
            let seed = Self.seeds[iteration % Self.seeds.count]
            var bytes = Array(seed.utf8)
            let mutations = Int.random(in: 1...6, using: &generator)
            for _ in 0..<mutations { Self.mutate(&bytes, using: &generator) }
            switch GatewayConfiguration.parseForFuzzing(bytes) {
            case .success(let configuration):
                parsedCount += 1
                // Exercise what a successful parse feeds to the rest of the program.
                _ = configuration.checkReport()
                _ = configuration.routes.destinations(environment: .production, bundleId: "com.acme.journal", type: "REFUND", subtype: nil)
            case .failure(let errors):
                failedCount += 1
                if !Self.positionsAreValid(errors, in: bytes) {
                    Issue.record("iteration \(iteration): invalid error position in\n\(errors)\ninput: \(String(decoding: bytes, as: UTF8.self).debugDescription)")
                    return
                }
            }
        }
        // Both outcomes must actually be reached, or the mutations test nothing.
        #expect(parsedCount > 100)
        #expect(failedCount > 1000)
    }

    @Test func everyTruncationOfTheSeeds() {
        for seed in Self.seeds {
            let bytes = Array(seed.utf8)
            for length in 0...bytes.count {
                let prefix = Array(bytes[..<length])
                if case .failure(let errors) = GatewayConfiguration.parseForFuzzing(prefix) {
                    #expect(Self.positionsAreValid(errors, in: prefix), "truncated at \(length): \(errors)")
                }
            }
        }
    }

    @Test func arbitraryBytes() {
        var generator = SeededGenerator(seed: 42)
        for _ in 0..<1000 {
            let bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if case .failure(let errors) = GatewayConfiguration.parseForFuzzing(bytes) {
                #expect(Self.positionsAreValid(errors, in: bytes))
            }
        }
    }

    static func mutate(_ bytes: inout [UInt8], using generator: inout SeededGenerator) {
        let position = bytes.isEmpty ? 0 : Int.random(in: 0..<bytes.count, using: &generator)
        switch Int.random(in: 0..<7, using: &generator) {
        case 0 where !bytes.isEmpty:  // flip a bit
            bytes[position] ^= 1 << UInt8.random(in: 0..<8, using: &generator)
        case 1 where !bytes.isEmpty:  // random byte
            bytes[position] = UInt8.random(in: 0...255, using: &generator)
        case 2:  // insert a random byte
            bytes.insert(UInt8.random(in: 0...255, using: &generator), at: position)
        case 3:  // insert a dictionary fragment
            bytes.insert(contentsOf: Array(dictionary.randomElement(using: &generator)!.utf8), at: position)
        case 4 where !bytes.isEmpty:  // delete a run
            let end = min(bytes.count, position + Int.random(in: 1...16, using: &generator))
            bytes.removeSubrange(position..<end)
        case 5:  // truncate
            bytes.removeSubrange(position...)
        default:  // duplicate a run (repeats directives, lines, braces)
            guard !bytes.isEmpty else { return }
            let end = min(bytes.count, position + Int.random(in: 1...64, using: &generator))
            bytes.insert(contentsOf: bytes[position..<end], at: end)
        }
    }

    /// Errors are sorted, and each points at an existing line and a column at most one past
    /// the end of that line (where a missing word is reported).
    static func positionsAreValid(_ errors: ConfigErrors, in bytes: [UInt8]) -> Bool {
        let lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self).unicodeScalars.count }
        guard !errors.errors.isEmpty else { return false }
        var previous = (0, 0)
        for error in errors.errors {
            guard error.line >= 1, error.line <= lines.count, error.column >= 1,
                  error.column <= lines[error.line - 1] + 1, !error.message.isEmpty,
                  (error.line, error.column) >= previous
            else { return false }
            previous = (error.line, error.column)
        }
        return true
    }
}
