import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// `api-key`, `reconcile` and `apple-api-url` (SPEC "Reconciliation with Apple").
@Suite struct ReconcileDirectiveTests {
    static let key = "api-key ./SubscriptionKey_ABC123DEFG.p8 ABC123DEFG 57246542-96fe-1a63-e053-0824d011072a"

    @Test func theSpecExampleParses() throws {
        let c = try parsed("""
            apple-api-url https://127.0.0.1:8443 ca-file ./test-ca.pem
            app com.acme.journal {
                apple-id 1234567890
                \(Self.key)
                reconcile every 1h overlap 2h
            }
            """)
        let app = try #require(c.app(bundleId: "com.acme.journal"))
        #expect(app.apiKey == APIKeyFile(path: "./SubscriptionKey_ABC123DEFG.p8", keyId: "ABC123DEFG",
                                         issuerId: "57246542-96fe-1a63-e053-0824d011072a"))
        #expect(app.reconcile == ReconcileSchedule(every: .seconds(3600), overlap: .seconds(7200)))
        #expect(c.appleAPI?.url.description == "https://127.0.0.1:8443")
        #expect(c.appleAPI?.caFile == "./test-ca.pem")
        let report = c.checkReport()
        #expect(report.contains("reconcile every 1h overlap 2h (production and sandbox)"))
        #expect(report.contains("App Store Server API: https://127.0.0.1:8443 (ca-file ./test-ca.pem)"))
    }

    @Test func withoutTheLinesNothingIsReconciled() throws {
        let c = try parsed("app com.acme.journal {\n    apple-id 1\n}\n")
        #expect(c.apps[0].apiKey == nil && c.apps[0].reconcile == nil && c.appleAPI == nil)
        #expect(!c.checkReport().contains("App Store Server API"))
    }

    @Test func eachMistakeIsNamed() {
        func app(_ line: String) -> String { "app com.acme.journal {\n    \(line)\n}\n" }
        expectError(app("api-key ./k.p8 ABC123DEFG"), .missingArgument, line: 2, column: 30, containing: "api-key KEY-FILE KEY-ID ISSUER-ID")
        expectError(app("api-key ./k.p8 abc123defg 57246542-96fe-1a63-e053-0824d011072a"), .invalidValue, line: 2, column: 20,
                    containing: "10 upper-case letters")
        // Key id and issuer id swapped: the commonest slip.
        expectError(app("api-key ./k.p8 57246542-96fe-1a63-e053-0824d011072a ABC123DEFG"), .invalidValue, line: 2, column: 20,
                    containing: "swapped")
        expectError(app("api-key ./k.p8 ABC123DEFG 57246542-96fe-1a63-e053-0824d011072"), .invalidValue, line: 2, column: 31,
                    containing: "not an issuer id")
        expectError(app("api-key ./k.p8 ABC123DEFG 57246542-96fe-1a63-e053-0824d01107zz"), .invalidValue, line: 2, column: 31,
                    containing: "not an issuer id")
        expectError(app("\(Self.key)\n    reconcile 1h 2h"), .missingArgument, line: 3, column: 20, containing: "reconcile every DURATION overlap DURATION")
        expectError(app("\(Self.key)\n    reconcile each 1h overlap 2h"), .invalidValue, line: 3, column: 15, containing: "expected 'every'")
        expectError(app("\(Self.key)\n    reconcile every 1h with 2h"), .invalidValue, line: 3, column: 24, containing: "expected 'overlap'")
        expectError(app("\(Self.key)\n    reconcile every 30s overlap 2h"), .invalidValue, line: 3, column: 21, containing: "shorter than 1m")
        expectError(app("\(Self.key)\n    reconcile every 1h overlap 200d"), .invalidValue, line: 3, column: 32, containing: "longer than 180d")
        expectError(app("\(Self.key)\n    reconcile every 1h overlap 2h\n    reconcile every 2h overlap 2h"), .duplicate, line: 4, column: 5)
        expectError(app("reconcile every 1h overlap 2h"), .missingArgument, line: 2, column: 1, containing: "no 'api-key'")
        expectError("apple-api-url ftp://example.com\n", .invalidValue, line: 1, column: 15)
        expectError("apple-api-url https://example.com ca-file\n", .invalidValue, line: 1, column: 35, containing: "ca-file PEM-FILE")
        expectError("apple-api-url https://example.com\napple-api-url https://example.org\n", .duplicate, line: 2, column: 1)
    }
}
