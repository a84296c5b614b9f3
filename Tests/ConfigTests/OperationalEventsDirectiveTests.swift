import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// `operational-events -> NAME`, `intake-silence`, `disk-low` and `format slack` (SPEC
/// "Event log, search and operational events").
@Suite struct OperationalEventsDirectiveTests {
    static let ops = "destination ops webhook https://hooks.example.com/T0/B0 {\n    format slack\n}\n"

    @Test func theSpecExampleParsesWithDefaults() throws {
        let c = try parsed(Self.ops + "operational-events -> ops\n")
        #expect(c.operationalEvents.destination == "ops")
        #expect(c.operationalEvents.intakeSilence == .seconds(6 * 3600))
        #expect(c.operationalEvents.diskLow == 1 << 30)
        #expect(try webhook(c, "ops").delivery.format == .slack)
        let report = c.checkReport()
        #expect(report.contains("Operational events -> ops; intake-silence 6h, disk-low 1GiB"), "\(report)")
        #expect(report.contains("ops  webhook https://hooks.example.com/T0/B0  (operational events only)"), "\(report)")
        #expect(report.contains("format slack"), "\(report)")
    }

    @Test func withoutTheDirectiveNoneAreSent() throws {
        let c = try parsed("intake-silence 30m\ndisk-low 512MiB\n")
        #expect(c.operationalEvents == OperationalEventsConfiguration(destination: nil, intakeSilence: .seconds(1800), diskLow: 512 << 20))
        #expect(c.checkReport().contains("Operational events <not set>: none are sent; intake-silence 30m, disk-low 512MiB"))
    }

    /// Any kind may receive them, and the destination may be declared after the directive.
    @Test func anyKindDeclaredAnywhere() throws {
        let c = try parsed("operational-events -> audit\ndestination audit file ./data/ops\n")
        #expect(c.operationalEvents.destination == "audit")
    }

    @Test func eachMistakeIsNamed() {
        expectError("operational-events -> nowhere\n", .unknownDestination, line: 1, column: 23,
                    containing: "operational-events names unknown destination 'nowhere' (no destination is declared)")
        expectError(Self.ops + "operational-events ops\n", .missingArrow, line: 4, column: 20, containing: "operational-events -> DESTINATION")
        expectError(Self.ops + "operational-events ->\n", .missingArgument, line: 4, column: 22, containing: "operational-events -> DESTINATION")
        expectError(Self.ops + "operational-events -> ops ops\n", .unexpectedArgument, line: 4, column: 27)
        expectError(Self.ops + "operational-events -> ops,ops\n", .invalidValue, line: 4, column: 23, containing: "more than one")
        expectError(Self.ops + "operational-events -> ops\noperational-events -> ops\n", .duplicate, line: 5, column: 1)
        expectError("intake-silence 30s\n", .invalidValue, line: 1, column: 16, containing: "shorter than 1m")
        expectError("intake-silence soon\n", .invalidValue, line: 1, column: 16, containing: "invalid intake-silence")
        expectError("disk-low 1TB\n", .invalidValue, line: 1, column: 10, containing: "invalid disk-low")
        expectError("disk-low\n", .missingArgument, line: 1, column: 9, containing: "disk-low SIZE")
    }

    /// A chat webhook is HTTP: `format slack` on another kind is refused, with the reason.
    @Test func slackIsForWebhooksOnly() {
        expectError("destination q redis-stream redis://cache:6379 {\n    stream events\n    format slack\n}\n", .invalidValue, line: 3, column: 12,
                    containing: "slack is for webhook destinations")
        expectError("destination w webhook https://example.com/h {\n    format chat\n}\n", .invalidValue, line: 2, column: 12,
                    containing: "'chat' is not normalized, apple or slack")
    }
}
