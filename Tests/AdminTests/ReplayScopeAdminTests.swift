import Foundation
import Testing
@testable import StoreRelayGateway
import StoreRelayDelivery
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// Issue 25, points 6 and 12, where an operator meets them: the API, the page and `dlq`.
/// Stale replays answer 409 with the reason unless forced; "replay all" leaves quarantined
/// letters out unless asked for by reason; `not-understood` is a reason filter of its own,
/// and such a letter is found by the transaction ids of its nested data.
@Suite struct ReplayScopeAdminTests {
    static let staleReason = "stale: signed 2026-09-01T10:00:00.000Z, before the 30d dedupe-window, "
        + "so a replay cannot be told from a first delivery"

    /// A not-understood letter (its nested data failed), as the gateway writes it.
    @discardableResult
    static func addNotUnderstood(_ admin: AdminHarness, transactionId: String = "2000000777000001") throws -> DeadLetter {
        let nested = try NestedDataNotification(uuid: UUID().uuidString.lowercased(), transactionId: transactionId,
                                                originalTransactionId: "2000000777000000")
        let letter = DeadLetter(
            notification: StoredNotification(event: nested.event, disposition: .quarantine(reason: nested.reason), destinations: [],
                                             body: nested.body, receivedAt: .now()),
            destination: nil, reason: .quarantined, detail: nested.reason, attempts: [], createdAt: .now())
        let written = DispatchSemaphore(value: 0)
        admin.backend.store.write(letter) { _ in written.signal() }
        written.wait()
        return letter
    }

    func dlq(_ admin: AdminHarness, _ arguments: [String]) throws -> CommandResult {
        try CommandRunner.storerelay(["dlq"] + arguments + ["--admin", admin.baseURL, "--token", admin.token])
    }

    @Test func aStaleReplayAnswers409WithTheReasonUnlessForced() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add()
        let other = try admin.backend.add()
        admin.backend.update {
            $0.outcomes[letter.id] = .stale(reason: Self.staleReason)
            $0.outcomes[other.id] = .stale(reason: Self.staleReason)
        }
        let refused = try admin.curl("/api/dead-letters/\(letter.id)/replay", method: "POST", headers: [admin.bearer])
        #expect(refused.status == 409 && refused.json?["error"] == "conflict")
        let message = refused.json?["message"]?.stringValue ?? ""
        #expect(message.contains(Self.staleReason) && message.contains("force=1"), "\(message)")
        #expect(admin.backend.store.count == 2)

        for (path, body) in [("/replay?force=maybe", ""), ("/replay", #"{"force":"yes"}"#), ("/replay", "[]"), ("/replay", "{nope")] {
            let bad = try admin.curl("/api/dead-letters/\(letter.id)" + path, method: "POST", headers: [admin.bearer], body: body)
            #expect(bad.status == 400, "\(path) \(body)")
        }
        #expect(try admin.curl("/api/dead-letters/\(letter.id)/replay?force=1", method: "POST", headers: [admin.bearer]).status == 200)
        #expect(try admin.curl("/api/dead-letters/\(other.id)/replay", method: "POST", headers: [admin.bearer],
                               body: #"{"force":true}"#).status == 200)
        #expect(admin.backend.replayed == [letter.id, other.id])
        #expect(admin.backend.forced.suffix(2) == [true, true])
    }

    @Test func replayAllLeavesQuarantinedLettersOutAndCountsStaleOnes() throws {
        let admin = try AdminHarness()
        let exhausted = try admin.backend.add(destination: "billing", reason: .exhausted)
        let old = try admin.backend.add(destination: "billing", reason: .rejected)
        let misplaced = try admin.backend.add(destination: nil, reason: .quarantined)
        admin.backend.update { $0.outcomes[old.id] = .stale(reason: Self.staleReason) }

        let all = try admin.curl("/api/dead-letters/replay", method: "POST", headers: [admin.bearer], body: "{}")
        #expect(all.status == 200 && all.json == ["replayed": 1, "stale": 1], "\(all.body)")
        #expect(admin.backend.replayed == [exhausted.id])
        #expect(admin.backend.store.letter(id: misplaced.id) != nil)

        let quarantined = try admin.curl("/api/dead-letters/replay", method: "POST", headers: [admin.bearer],
                                         body: #"{"reason":"quarantined"}"#)
        #expect(quarantined.json == ["replayed": 1, "stale": 0])
        let forced = try admin.curl("/api/dead-letters/replay?force=1", method: "POST", headers: [admin.bearer], body: "{}")
        #expect(forced.json == ["replayed": 1, "stale": 0])
        #expect(admin.backend.replayed == [exhausted.id, misplaced.id, old.id])
        #expect(admin.backend.store.count == 0)
    }

    @Test func thePageFiltersNotUnderstoodAndItsReplayAllLeavesQuarantinedOut() throws {
        let admin = try AdminHarness()
        let unreadable = try Self.addNotUnderstood(admin)
        let misplaced = try admin.backend.add(destination: nil, reason: .quarantined)
        let exhausted = try admin.backend.add(destination: "billing", reason: .exhausted)

        let filtered = try admin.curl("/?reason=not-understood", headers: [admin.bearer])
        #expect(filtered.status == 200)
        #expect(filtered.body.contains(#"<option value="not-understood" selected>"#))
        #expect(filtered.body.contains(unreadable.id) && !filtered.body.contains(misplaced.id) && !filtered.body.contains(exhausted.id))
        let listed = try admin.curl("/api/dead-letters?reason=not-understood", headers: [admin.bearer])
        #expect(listed.json?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [unreadable.id])
        // Its stored reason is still `quarantined`: the filter picks a kind of it.
        #expect(listed.json?["items"]?.arrayValue?.first?["reason"] == "quarantined")
        let searched = try admin.curl("/?q=2000000777000001", headers: [admin.bearer])
        #expect(searched.body.contains(unreadable.id) && !searched.body.contains(misplaced.id))
        let byTransaction = try admin.curl("/api/dead-letters?transactionId=2000000777000001", headers: [admin.bearer])
        #expect(byTransaction.json?["items"]?.arrayValue?.count == 1)

        // The default "Replay all matching" (no filter): the quarantined letters stay.
        let page = try admin.curl("/", headers: [admin.bearer]).body
        #expect(page.contains("quarantined letters only with the reason filter"))
        let all = try admin.curl("/ui/replay-all", method: "POST", headers: [admin.bearer], body: "")
        #expect(all.headers["location"] == "/?done=replayed-1")
        #expect(admin.backend.replayed == [exhausted.id])
        #expect(admin.backend.store.count == 2)
        let asked = try admin.curl("/ui/replay-all", method: "POST", headers: [admin.bearer], body: "reason=not-understood")
        #expect(asked.headers["location"] == "/?reason=not-understood&done=replayed-1")
        #expect(admin.backend.replayed == [exhausted.id, unreadable.id])
    }

    @Test func thePageSaysWhatAStaleReplayLeft() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add()
        admin.backend.update { $0.outcomes[letter.id] = .stale(reason: Self.staleReason) }
        let one = try admin.curl("/ui/replay", method: "POST", headers: [admin.bearer], body: "id=\(letter.id)")
        #expect(one.headers["location"] == "/?done=stale")
        #expect(try admin.curl("/?done=stale", headers: [admin.bearer]).body.contains("stale (signed before the dedupe-window)"))
        let all = try admin.curl("/ui/replay-all", method: "POST", headers: [admin.bearer], body: "")
        #expect(all.headers["location"] == "/?done=replayed-0-stale-1")
        let notice = try admin.curl("/?done=replayed-0-stale-1", headers: [admin.bearer]).body
        #expect(notice.contains("Replayed 0 dead letters. Left 1 whose notification is stale"))
        #expect(AdminHandler.notice("replayed-2-stale-x") == nil && AdminHandler.notice("purged-1-stale-1") == nil)
    }

    /// `dlq list --reason not-understood`, and `dlq replay`: the count it confirms is what the
    /// server replays, stale letters are reported, and `--force` sends them.
    @Test func theCommandLineFiltersNotUnderstoodAndForcesStaleReplays() throws {
        let admin = try AdminHarness()
        let unreadable = try Self.addNotUnderstood(admin)
        try admin.backend.add(destination: nil, reason: .quarantined)
        let exhausted = try admin.backend.add(destination: "billing", reason: .exhausted)
        let old = try admin.backend.add(destination: "billing", reason: .exhausted)
        admin.backend.update { $0.outcomes[old.id] = .stale(reason: Self.staleReason) }

        let listed = try dlq(admin, ["list", "--json", "--reason", "not-understood"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(try JSONValue.parse(listed.stdout).arrayValue?.compactMap { $0["id"]?.stringValue } == [unreadable.id])
        let usage = try dlq(admin, ["list", "--reason", "misunderstood"])
        #expect(usage.status == 2 && usage.stderr.contains("not-understood"))

        let single = try dlq(admin, ["replay", old.id])
        #expect(single.status == 1 && single.stderr.contains("stale: signed"), "\(single.stderr)")
        let dryRun = try dlq(admin, ["replay", "--all", "--dry-run"])
        #expect(dryRun.stdout == "2 dead letters match (quarantined ones left out)\n", "\(dryRun.stdout)")
        let bulk = try dlq(admin, ["replay", "--all", "--yes"])
        #expect(bulk.status == 0)
        #expect(bulk.stdout.contains("replayed 1 dead letter\n") && bulk.stdout.contains("left 1 whose notification is stale"),
                "\(bulk.stdout)")
        #expect(admin.backend.replayed == [exhausted.id])
        let forced = try dlq(admin, ["replay", "--force", old.id])
        #expect(forced.status == 0 && forced.stdout.contains("replayed \(old.id)"), "\(forced.stderr)")
        #expect(try dlq(admin, ["purge", "--force", old.id]).status == 2, "--force is replay's alone")
    }
}
