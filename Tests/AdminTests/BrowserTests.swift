import Foundation
import Testing
import StoreRelayTestSupport
import StoreRelayGateway
import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore

/// Headless Chromium through the page, driven by chromedriver (Tests/Fixtures/browser_replay.py).
@Suite struct BrowserTests {
    static let available = CommandRunner.isAvailable("chromedriver")
        && (CommandRunner.isAvailable("chromium") || CommandRunner.isAvailable("chromium-browser")
            || CommandRunner.isAvailable("google-chrome"))

    @Test(.enabled(if: available, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver): browser test skipped"))
    func logInSeeADeadLetterReplayItAndSeeItGone() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add(destination: "billing", productId: "com.acme.journal.yearly")
        let other = try admin.backend.add(destination: "ledger")
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/browser_replay.py").path
        let result = try CommandRunner.run("python3", [script, admin.baseURL, admin.token, letter.id])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ok: logged in, replayed \(letter.id)"))
        #expect(admin.backend.replayed == [letter.id])
        #expect(admin.backend.store.letter(id: other.id) != nil, "only the clicked row was replayed")
    }

    /// Issue 13, point 1: search by the event id, open the event's view, replay from there.
    @Test(.enabled(if: available, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver): browser test skipped"))
    func searchAnEventOpenItsViewAndReplayFromThere() throws {
        let admin = try AdminHarness()
        let eventId = "7e1b4c2a-5d6f-4a8b-9c0d-1e2f3a4b5c6d"
        let letter = try admin.backend.add(eventId: eventId, destination: "billing")
        let other = try admin.backend.add(destination: "billing")
        try admin.backend.recordDeadLettered(letter)
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/browser_replay.py").path
        let result = try CommandRunner.run("python3", [script, admin.baseURL, admin.token, letter.id, eventId])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ok: searched \(eventId), opened its view, replayed \(letter.id)"))
        #expect(admin.backend.replayed == [letter.id])
        #expect(admin.backend.store.letter(id: other.id) != nil)
    }

    /// Issue 30, point 2: the Pause and Resume buttons beside a destination.
    @Test(.enabled(if: available, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver): browser test skipped"))
    func pauseAndResumeADestinationFromItsRow() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add(destination: "billing")
        admin.backend.update { $0.statuses = [FakeBackend.status("billing", depth: 4), FakeBackend.status("ledger", kind: "file")] }
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/browser_replay.py").path
        let result = try CommandRunner.run("python3", [script, admin.baseURL, admin.token, letter.id, "--pause", "billing"])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("ok: paused and resumed billing"))
        #expect(admin.backend.destinationStatuses.allSatisfy { !$0.paused }, "paused, then resumed")
    }
}

/// Issue 28, point 2: at 1,280 pixels nothing scrolls sideways, on the home page full of
/// long values, a subscription's search results and an event's view; each is saved as a
/// screenshot (into `STORERELAY_SCREENSHOTS` when set: README's come from there).
@Suite struct BrowserLayoutTests {
    @Test(.enabled(if: BrowserTests.available, "Chromium and chromedriver are not installed (apt-get install chromium chromium-driver): browser test skipped"))
    func everyViewFitsA1280PixelWindow() throws {
        let admin = try AdminHarness()
        let now = Timestamp.now().milliseconds
        admin.backend.update {
            $0.statuses = [
                FakeBackend.status("billing", depth: 12, breaker: .open,
                                   lastError: "HTTP 503 Service Unavailable: upstream connect error or disconnect/reset before headers. reset reason: connection timeout"),
                FakeBackend.status("analytics-warehouse-ingest", kind: "sqs", depth: 0),
                FakeBackend.status("ledger", kind: "file"),
            ]
            $0.intake = [
                IntakeFigures(app: "com.acme.journal", environment: "production", received: 1_284, quarantined: 0, rejected: 3,
                              lastReceived: Timestamp(milliseconds: now - 4 * 60_000)),
                IntakeFigures(app: "com.acme.journal", environment: "sandbox", received: 57, quarantined: 2, rejected: 0,
                              lastReceived: Timestamp(milliseconds: now - 3_600_000)),
                IntakeFigures(app: "unknown", environment: "unknown", received: 0, quarantined: 0, rejected: 1),
            ]
            $0.cluster = [
                "server": "rediss://relay-cache.abc123.euw1.cache.amazonaws.com:6379", "connected": true, "answering": true,
                "instanceId": "relay-7f9c4d-2", "durabilityProblem": nil, "integrity": "sealed", "waitReplicas": 1,
                "durability": ["appendonly": "yes", "appendfsync": "everysec", "maxmemory-policy": "noeviction"],
                "instances": [["id": "relay-7f9c4d-2", "lastSeen": .string(Timestamp.now().iso8601)],
                              ["id": "relay-7f9c4d-5", "lastSeen": .string(Timestamp.now().iso8601)]],
            ]
            $0.reconciliations = [[
                "app": "com.acme.journal", "environment": "production",
                "lastSuccess": .string(Timestamp(milliseconds: now - 3_600_000).iso8601),
                "lastRun": ["outcome": "success", "dryRun": true, "startedAt": .string(Timestamp(milliseconds: now - 600_000).iso8601),
                            "found": 212, "recovered": 2],
                "lastProbe": ["outcome": "arrived", "roundTripMs": 1840, "startedAt": .string(Timestamp(milliseconds: now - 7_200_000).iso8601)],
            ]]
        }
        let subscription = "2000000812345678"
        for index in 0..<8 {
            try admin.backend.add(destination: index % 2 == 0 ? "billing" : "analytics-warehouse-ingest",
                                  productId: "com.acme.journal.premium.yearly.family-sharing",
                                  type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE",
                                  error: "HTTP 503 Service Unavailable: upstream connect error or disconnect/reset before headers",
                                  originalTransactionId: index < 2 ? subscription : "20000009\(index)1234567",
                                  bundleId: "com.acme.journal.enterprise.edition")
        }
        let eventId = "3f0c9a8e-2b7d-4c61-9e5a-8d4f1b2c3a4e"
        try admin.backend.recordEvent(id: eventId, type: "SUBSCRIBED", originalTransactionId: subscription,
                                      receivedAt: Timestamp(milliseconds: now - 30 * 86_400_000),
                                      deliveries: [("billing", .delivered), ("analytics-warehouse-ingest", .delivered), ("ledger", .delivered)])
        try admin.backend.recordEvent(id: "9a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", type: "DID_RENEW", originalTransactionId: subscription,
                                      receivedAt: Timestamp(milliseconds: now - 86_400_000),
                                      deliveries: [("billing", .deadLettered), ("analytics-warehouse-ingest", .pending), ("ledger", .delivered)])
        // The event log: long names and many destinations, the widest rows the view can get.
        let destinations: [EventSummary.Delivery] = [.init(destination: "billing", state: .delivered),
                                                     .init(destination: "analytics-warehouse-ingest", state: .pending),
                                                     .init(destination: "ledger", state: .deadLettered)]
        var logged: [EventSummary] = []
        for index in 0..<30 {
            let id = String(format: "%08x-2b7d-4c61-9e5a-8d4f1b2c3a4e", index * 7919)
            let received = Timestamp(milliseconds: now - Int64(index) * 3_600_000)
            let environment = index % 3 == 0 ? "sandbox" : "production"
            let original = index % 4 == 0 ? subscription : "20000009\(index)1234567"
            logged.append(EventSummary(id: id, receivedAt: received, type: "DID_CHANGE_RENEWAL_PREF", subtype: "DOWNGRADE",
                                       environment: environment, bundleId: "com.acme.journal.enterprise.edition",
                                       originalTransactionId: original, transactionId: "3000000\(index)99887766", deliveries: destinations))
        }
        admin.backend.update { [logged] in $0.logged = logged }
        let output = try ProcessInfo.processInfo.environment["STORERELAY_SCREENSHOTS"]
            ?? TestPaths.makeTemporaryDirectory("storerelay-screenshots").path
        let script = TestPaths.packageRoot.appendingPathComponent("Tests/Fixtures/browser_layout.py").path
        let result = try CommandRunner.run("python3", [script, admin.baseURL, admin.token, output,
                                                       "admin-home=/", "admin-subscription=/?q=\(subscription)",
                                                       "admin-event=/events/\(eventId)", "admin-events=/events",
                                                       "admin-events-filtered=/events?q=\(subscription)&environment=sandbox"])
        #expect(result.status == 0, "\(result.stderr)")
        for view in ["admin-home", "admin-subscription", "admin-event", "admin-events", "admin-events-filtered"] {
            #expect(result.stdout.contains("ok: \(view) "), "\(view) fits: \(result.stdout)")
            #expect(FileManager.default.fileExists(atPath: output + "/\(view).png"))
        }
    }
}
