import Foundation
import Testing
import StoreRelayTestSupport

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
