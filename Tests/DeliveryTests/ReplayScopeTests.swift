import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// Issue 25, point 6: "replay all" takes quarantined letters only when asked for them by
/// reason, and every replay re-applies the staleness rule unless forced.
@Suite struct ReplayScopeTests {
    /// An engine over a fresh journal (default 30-day dedupe window), one file destination.
    final class Harness {
        let directory: URL
        let journal: Journal
        let engine: DeliveryEngine
        var deadLetters: DeadLetterStore { engine.deadLetters }

        init() throws {
            directory = try TestPaths.makeTemporaryDirectory("storerelay-replay-scope")
            journal = try Journal.open(directory: directory.appendingPathComponent("journal").path, logger: .disabled)
            let configuration = try GatewayConfiguration.parse(text: """
                data \(directory.path)
                destination all file \(directory.appendingPathComponent("queue").path)
                route * * * -> all
                """)
            let deadLetters = try DeadLetterStore.open(directory: directory.appendingPathComponent("dead-letters").path, logger: .disabled)
            engine = try DeliveryEngine(configuration: configuration, journal: journal, deadLetters: deadLetters, logger: .disabled)
        }

        func stop() {
            let done = DispatchSemaphore(value: 0)
            engine.stop { done.signal() }
            done.wait()
            journal.close()
        }

        /// Writes a letter of `reason` for a notification signed `signedAgo` ago.
        @discardableResult
        func letter(_ reason: DeadLetter.Reason, signedAgo: Duration = .seconds(60), detail: String = "gave up") throws -> DeadLetter {
            var notification = try sampleNotification(destinations: reason == .quarantined ? [] : ["all"], signedAgo: signedAgo)
            if reason == .quarantined { notification.disposition = .quarantine(reason: detail) }
            let letter = DeadLetter(notification: notification, destination: reason == .quarantined ? nil : "all", reason: reason,
                                    detail: detail, attempts: [], createdAt: .now())
            let written = DispatchSemaphore(value: 0)
            deadLetters.write(letter) { _ in written.signal() }
            written.wait()
            return letter
        }
    }

    static let forty: Duration = .seconds(40 * 86_400)

    @Test func aBulkReplayWithoutAReasonLeavesQuarantinedLettersOut() throws {
        let harness = try Harness()
        defer { harness.stop() }
        let exhausted = try harness.letter(.exhausted)
        let misplaced = try harness.letter(.quarantined, detail: "app com.other.app is not declared")
        let stale = try harness.letter(.quarantined, signedAgo: Self.forty, detail: "stale: signed long ago")

        // The page's default "Replay all matching", `POST /api/dead-letters/replay {}`.
        #expect(harness.engine.replayAll(DeadLetterQuery()) == BulkReplayResult(replayed: 1, stale: 0))
        #expect(harness.deadLetters.letter(id: misplaced.id) != nil && harness.deadLetters.letter(id: stale.id) != nil)
        #expect(pollUntil(timeout: 20) { harness.deadLetters.letter(id: exhausted.id) == nil }, "the exhausted letter was delivered")

        // Asked for by reason: the quarantined ones are replayed, the stale one is not.
        #expect(harness.engine.replayAll(DeadLetterQuery(reason: .stored(.quarantined))) == BulkReplayResult(replayed: 1, stale: 1))
        #expect(harness.deadLetters.letter(id: stale.id) != nil)
        #expect(pollUntil(timeout: 20) { harness.deadLetters.letter(id: misplaced.id) == nil })
    }

    @Test func aReplayReappliesTheStalenessRuleUnlessForced() throws {
        let harness = try Harness()
        defer { harness.stop() }
        // Dead-lettered when fresh, replayed 40 days on: as stale as a late notification.
        let old = try harness.letter(.exhausted, signedAgo: Self.forty)
        guard case .stale(let reason) = harness.engine.replay(deadLetterId: old.id) else {
            Issue.record("a notification signed 40 days ago was replayed without force")
            return
        }
        #expect(reason.hasPrefix("stale: signed "), "\(reason)")
        #expect(reason.contains("before the 30d dedupe-window"), "\(reason)")
        #expect(harness.engine.replayAll(DeadLetterQuery()) == BulkReplayResult(replayed: 0, stale: 1))
        #expect(harness.deadLetters.letter(id: old.id) != nil, "a refused replay keeps the letter")

        // Forced, one by one or in bulk.
        #expect(harness.engine.replay(deadLetterId: old.id, force: true) == .replayed(destinations: ["all"]))
        let other = try harness.letter(.rejected, signedAgo: Self.forty)
        #expect(harness.engine.replayAll(DeadLetterQuery(reason: .stored(.rejected)), force: true) == BulkReplayResult(replayed: 1, stale: 0))
        #expect(pollUntil(timeout: 20) { harness.deadLetters.letter(id: other.id) == nil })
        // A notification signed within the window needs no force.
        let recent = try harness.letter(.exhausted, signedAgo: .seconds(29 * 86_400))
        #expect(harness.engine.replay(deadLetterId: recent.id) == .replayed(destinations: ["all"]))
    }

    /// A forced bulk replay cut short by a crash resumes forced: the record says so.
    @Test func aForcedBulkReplayIsRecordedAsForced() throws {
        let store = try ReplayIntentStore(directory: TestPaths.makeTemporaryDirectory("storerelay-intents").path, logger: .disabled)
        let intent = ReplayIntentStore.Intent(id: ReplayIntentStore.newID(), createdAt: Timestamp(milliseconds: 1_000),
                                              letters: [DeadLetter.id(eventId: "e", destination: "all")], force: true)
        try store.record(intent)
        #expect(store.unfinished() == [intent])
    }
}
