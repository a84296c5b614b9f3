import Testing
@testable import StoreRelayConfig

/// `signing-secret NEW OLD` (SPEC "Delivery controls"): one or two secrets, newest first, and
/// what `storerelay check` shows of them (a fingerprint, never the secret).
@Suite struct SigningSecretTests {
    static let new = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"  // key fingerprint sha256:f74e1720
    static let old = "whsec_c3RvcmVyZWxheS1vbGQtc2lnbmluZy1rZXk="

    func block(_ option: String) -> String {
        "destination d webhook http://h/ {\n    \(option)\n}\nroute * * * -> d\n"
    }

    @Test func twoSecretsAreKeptNewestFirst() throws {
        let o = try webhook(try parsed(block("signing-secret \(Self.new) \(Self.old)")), "d")
        #expect(o.signingSecrets.map(\.value) == [Self.new, Self.old])
        #expect(o.signingSecret?.value == Self.new)
        #expect(o.signingKeys.count == 2 && o.signingKeys[1] == Array("storerelay-old-signing-key".utf8))
    }

    @Test func theReportShowsALabelledFingerprintOfEachSecretAndNeverTheSecret() throws {
        let report = try parsed(block("signing-secret ${NEW} ${OLD}"), environment: ["NEW": Self.new, "OLD": Self.old]).checkReport()
        #expect(report.contains("signing-secret <set> (new sha256:f74e1720, old sha256:"), "\(report)")
        #expect(!report.contains(Self.new) && !report.contains(Self.old))
        #expect(!report.contains("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw") && !report.contains("c3RvcmVyZWxheS1vbGQtc2lnbmluZy1rZXk"))
        let one = try parsed(block("signing-secret \(Self.new)")).checkReport()
        #expect(one.contains("signing-secret <set> (sha256:f74e1720), format normalized"), "\(one)")
        #expect(try parsed(block("timeout 1s")).checkReport().contains("signing-secret <not set>"))
    }

    @Test func aThirdSecretDuplicatesAndMalformedSecretsAreErrors() {
        expectError(block("signing-secret \(Self.new) \(Self.old) whsec_dGhpcmQ="), .unexpectedArgument, line: 2, column: 102,
                    containing: "signing-secret whsec_NEW [whsec_OLD]")
        expectError(block("signing-secret \(Self.new) \(Self.new)"), .invalidValue, line: 2, column: 59, containing: "the same secret is given twice")
        expectError(block("signing-secret \(Self.new) abc"), .invalidValue, line: 2, column: 59, containing: "does not start with 'whsec_'")
        expectError(block("signing-secret whsec_*** \(Self.new)"), .invalidValue, line: 2, column: 20, containing: "base64")
        expectError(block("signing-secret"), .missingArgument, line: 2, column: 19, containing: "signing-secret whsec_NEW [whsec_OLD]")
    }
}
