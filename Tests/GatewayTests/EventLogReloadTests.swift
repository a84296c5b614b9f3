import Testing
@testable import StoreRelayGateway
import StoreRelayConfig

/// `event-log` is read when the event log opens: a reload that changes it says it waits for
/// a restart instead of pretending to apply it.
@Suite struct EventLogReloadTests {
    @Test func aChangedRetentionNeedsARestart() throws {
        let old = try GatewayConfiguration.parse(text: "event-log 30d\n", fileName: "routes.conf", environment: [:])
        let new = try GatewayConfiguration.parse(text: "event-log 7d\n", fileName: "routes.conf", environment: [:])
        #expect(Gateway.settingsNeedingRestart(old, new).contains("event-log"))
        #expect(!Gateway.settingsNeedingRestart(old, old).contains("event-log"))
    }
}
