import Foundation
import Testing
import StoreRelayGateway
import StoreRelayDelivery
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// `storerelay dlq ...` as an operator runs it: the built binary in a child process, against a
/// real `AdminServer` in this process.
@Suite struct DlqCommandTests {
    func dlq(_ admin: AdminHarness, _ arguments: [String], token: String? = nil) throws -> CommandResult {
        try CommandRunner.storerelay(["dlq"] + arguments + ["--admin", admin.baseURL, "--token", token ?? admin.token])
    }

    @Test func listPrintsATableAndJSON() throws {
        let admin = try AdminHarness()
        let old = try admin.backend.add(destination: "billing", reason: .rejected, error: "HTTP 410 from billing\nline two",
                                        createdAt: Timestamp(milliseconds: Timestamp.now().milliseconds - 2 * 86_400_000))
        let new = try admin.backend.add(destination: nil, reason: .unrouted, type: "TEST", subtype: nil)
        let table = try dlq(admin, ["list"])
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first?.hasPrefix("ID") == true)
        for header in ["AGE", "DESTINATION", "REASON", "TYPE", "ENV", "BUNDLE", "LAST ERROR"] {
            #expect(lines.first?.contains(header) == true)
        }
        #expect(lines.count == 4 && lines[3] == "2 dead letters")
        #expect(lines[1].hasPrefix(new.id) && lines[1].contains("unrouted") && lines[1].contains("TEST"))
        #expect(lines[2].hasPrefix(old.id) && lines[2].contains("2d 0h") && lines[2].contains("DID_RENEW/BILLING_RECOVERY"))
        #expect(lines[2].contains("sandbox") && lines[2].contains("com.acme.journal") && lines[2].contains("HTTP 410 from billing line two"))

        let json = try dlq(admin, ["list", "--json", "--reason", "rejected"])
        #expect(json.status == 0)
        let records = try #require(try JSONValue.parse(json.stdout).arrayValue)
        #expect(records.map { $0["id"]?.stringValue } == [old.id])
        #expect(records.first?["event"]?["app"]?["bundleId"] == "com.acme.journal")

        let filtered = try dlq(admin, ["list", "--destination", "nowhere"])
        #expect(filtered.status == 0 && filtered.stdout.hasSuffix("0 dead letters\n"))
    }

    @Test func listFollowsCursorsUpToTheLimit() throws {
        let admin = try AdminHarness()
        let base = Timestamp.now().milliseconds - 10_000
        let count = 520
        let group = DispatchGroup()
        for index in 0..<count {
            let letter = DeadLetter.sample(index: index, createdAt: base + Int64(index))
            group.enter()
            admin.backend.store.write(letter) { _ in group.leave() }
        }
        group.wait()
        #expect(admin.backend.store.count == count)
        let all = try dlq(admin, ["list", "--json", "--limit", "1000"])
        let records = try #require(try JSONValue.parse(all.stdout).arrayValue)
        #expect(records.count == count, "two pages (500 + 20) joined")
        #expect(Set(records.compactMap { $0["id"]?.stringValue }).count == count)
        let some = try dlq(admin, ["list", "--limit", "510"])
        #expect(some.stdout.hasSuffix("510 dead letters shown; more match (raise --limit)\n"))
    }

    @Test func showPrintsPrettyJSONOrSaysNotFound() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add()
        let shown = try dlq(admin, ["show", letter.id])
        #expect(shown.status == 0)
        #expect(shown.stdout.hasPrefix("{\n  \"id\": \"\(letter.id)\""))
        #expect(try JSONValue.parse(shown.stdout)["eventId"]?.stringValue == letter.eventId)

        let missing = try dlq(admin, ["show", "dl-" + String(repeating: "0", count: 32)])
        #expect(missing.status == 1 && missing.stdout.isEmpty)
        #expect(missing.stderr == "storerelay dlq: there is no dead letter dl-\(String(repeating: "0", count: 32))\n")
        let invalid = try dlq(admin, ["show", "../../etc/passwd"])
        #expect(invalid.status == 1 && invalid.stderr.contains("is not a dead-letter id"))
    }

    @Test func replayAndPurgeByID() throws {
        let admin = try AdminHarness()
        let first = try admin.backend.add(destination: "billing")
        let second = try admin.backend.add(destination: "ledger")
        let unknown = "dl-" + String(repeating: "f", count: 32)
        let replay = try dlq(admin, ["replay", first.id, unknown])
        #expect(replay.status == 1, "one of them was not found")
        #expect(replay.stdout == "replayed \(first.id) to billing\n")
        #expect(replay.stderr == "storerelay dlq: there is no dead letter \(unknown)\n")
        #expect(admin.backend.replayed == [first.id])

        let purge = try dlq(admin, ["purge", second.id])
        #expect(purge.status == 0 && purge.stdout == "purged \(second.id)\n")
        #expect(admin.backend.store.count == 0)
    }

    @Test func bulkActionsCountFirstAndNeedYes() throws {
        let admin = try AdminHarness()
        let now = Timestamp.now().milliseconds
        let ancient = try admin.backend.add(destination: "billing", createdAt: Timestamp(milliseconds: now - 40 * 86_400_000))
        try admin.backend.add(destination: "billing", createdAt: Timestamp(milliseconds: now - 86_400_000))
        try admin.backend.add(destination: "ledger", reason: .rejected, createdAt: Timestamp(milliseconds: now - 50 * 86_400_000))

        let refused = try dlq(admin, ["purge", "--all"])
        #expect(refused.status == 2)
        #expect(refused.stdout == "3 dead letters match\n")
        #expect(refused.stderr.contains("--yes"))
        #expect(admin.backend.store.count == 3)

        let dryRun = try dlq(admin, ["purge", "--all", "--older-than", "30d", "--destination", "billing", "--dry-run"])
        #expect(dryRun.status == 0)
        #expect(dryRun.stdout == "1 dead letter matches (destination billing, older than 2592000s)\n")
        #expect(admin.backend.store.count == 3)

        let purged = try dlq(admin, ["purge", "--all", "--older-than", "30d", "--destination", "billing", "--yes"])
        #expect(purged.status == 0 && purged.stdout.hasSuffix("purged 1 dead letter\n"))
        #expect(admin.backend.store.letter(id: ancient.id) == nil && admin.backend.store.count == 2)

        let replayDry = try dlq(admin, ["replay", "--all", "--reason", "rejected", "--dry-run"])
        #expect(replayDry.status == 0 && replayDry.stdout == "1 dead letter matches (reason rejected)\n")
        #expect(admin.backend.replayAllCalls.isEmpty)
        let replayed = try dlq(admin, ["replay", "--all", "--reason", "rejected", "--yes"])
        #expect(replayed.status == 0 && replayed.stdout.hasSuffix("replayed 1 dead letter\n"))
        #expect(admin.backend.replayAllCalls.count == 1 && admin.backend.replayAllCalls[0].1 == .stored(.rejected))

        let nothing = try dlq(admin, ["replay", "--all", "--destination", "nowhere"])
        #expect(nothing.status == 0 && nothing.stdout == "0 dead letters match (destination nowhere, quarantined ones left out)\n")
    }

    @Test func wrongTokenAndUnreachableServerAreOneClearSentence() throws {
        let admin = try AdminHarness()
        let wrong = try dlq(admin, ["list"], token: "wrong")
        #expect(wrong.status == 1 && wrong.stdout.isEmpty)
        #expect(wrong.stderr.hasPrefix("storerelay dlq: the admin listener at \(admin.baseURL) rejected the admin token (HTTP 401)"))
        #expect(wrong.stderr.split(separator: "\n").count == 1)

        let closed = HTTPServer(configuration: HTTPServerConfiguration(address: "127.0.0.1:0")) { _, _ in }
        let port = try closed.start()
        let stopped = DispatchSemaphore(value: 0)
        closed.shutdown { stopped.signal() }
        stopped.wait()
        let unreachable = try CommandRunner.storerelay(["dlq", "list", "--admin", "http://127.0.0.1:\(port)", "--token", "x"])
        #expect(unreachable.status == 1)
        #expect(unreachable.stderr.hasPrefix("storerelay dlq: the admin listener at http://127.0.0.1:\(port) is not reachable"))
        #expect(unreachable.stderr.split(separator: "\n").count == 1)
    }

    @Test func addressAndTokenComeFromTheConfigurationAndTokenFile() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add()
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-dlq-config")
        let data = directory.appendingPathComponent("data").path
        let config = directory.appendingPathComponent("routes.conf").path
        try "admin 127.0.0.1:\(admin.port)\ndata \(data)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let noToken = try CommandRunner.storerelay(["dlq", "list", "--config", config])
        #expect(noToken.status == 1 && noToken.stderr.contains("no admin token"))

        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        try (admin.token + "\n").write(toFile: AdminToken.path(dataDirectory: data), atomically: true, encoding: .utf8)
        let fromFile = try CommandRunner.storerelay(["dlq", "show", letter.id, "--config", config])
        #expect(fromFile.status == 0, "\(fromFile.stderr)")
        let viaEnvironment = try CommandRunner.storerelay(
            ["dlq", "list"], environment: ["STORERELAY_CONFIG": config, "PATH": "/usr/bin:/bin"])
        #expect(viaEnvironment.status == 0 && viaEnvironment.stdout.contains(letter.id))

        try "admin 127.0.0.1:\(admin.port)\nadmin-token configured-token-0123456789abcdef0123\ndata \(data)\n".write(toFile: config, atomically: true, encoding: .utf8)
        let configured = try CommandRunner.storerelay(["dlq", "list", "--config", config])
        #expect(configured.status == 1 && configured.stderr.contains("rejected the admin token"), "admin-token wins over the file")
    }

    @Test func usageErrorsExitTwo() throws {
        for arguments in [["dlq"], ["dlq", "frobnicate"], ["dlq", "replay"], ["dlq", "replay", "--all", "dl-1"],
                          ["dlq", "show"], ["dlq", "list", "--limit", "0"], ["dlq", "list", "--reason", "late"],
                          ["dlq", "purge", "--all", "--older-than", "soon"], ["dlq", "purge", "dl-1", "--yes"],
                          ["dlq", "replay", "dl-1", "--destination", "x"], ["dlq", "list", "--bogus"]] {
            let result = try CommandRunner.storerelay(arguments + ["--admin", "http://127.0.0.1:1", "--token", "t"])
            #expect(result.status == 2, "\(arguments)")
            #expect(result.stderr.hasPrefix("storerelay dlq: ") && result.stderr.split(separator: "\n").count == 1)
        }
        let help = try CommandRunner.storerelay(["dlq", "--help"])
        #expect(help.status == 0 && help.stdout.contains("storerelay dlq purge"))
        #expect(try CommandRunner.storerelay(["--help"]).stdout.contains("dlq"))
    }
}

extension DeadLetter {
    /// A dead letter without waiting for its write (bulk tests batch the writes).
    static func sample(index: Int, createdAt: Int64) -> DeadLetter {
        let notification = try! FakeBackend.notification(id: "bulk-\(index)", productId: "p", type: "TEST", subtype: nil,
                                                         destination: "billing")
        return DeadLetter(notification: notification, destination: "billing", reason: .exhausted, detail: nil,
                          attempts: [], createdAt: Timestamp(milliseconds: createdAt))
    }
}

/// `storerelay events`' usage errors and its redeliver request, against a real `AdminServer`
/// (the list and show are covered end to end, with a gateway that keeps an event log).
@Suite struct EventsCommandTests {
    func events(_ admin: AdminHarness, _ arguments: [String]) throws -> CommandResult {
        try CommandRunner.storerelay(["events"] + arguments + ["--admin", admin.baseURL, "--token", admin.token])
    }

    @Test func usageErrorsExitTwo() throws {
        let admin = try AdminHarness()
        for arguments in [[], ["frobnicate"], ["show"], ["show", "a", "b"], ["list", "extra"], ["list", "--limit", "0"],
                          ["redeliver", "x"], ["redeliver", "--destination", "billing"], ["list", "--colour", "red"]] {
            let result = try events(admin, arguments)
            #expect(result.status == 2, "\(arguments): \(result.stderr)")
            #expect(result.stderr.hasPrefix("storerelay events: ") || result.stderr.contains("--colour"), "\(arguments): \(result.stderr)")
        }
    }

    /// Without an event log (this double keeps none) the list fails with the server's sentence.
    @Test func aServerWithoutAnEventLogSaysSo() throws {
        let admin = try AdminHarness()
        let result = try events(admin, ["list"])
        #expect(result.status == 1)
        #expect(result.stderr.contains("keeps no event log"), "\(result.stderr)")
    }

    /// The request goes out as POST /api/events/{id}/redeliver {"destination":..}: queued,
    /// it says so and exits 0; refused, it reports the server's sentence and exits 1.
    @Test func redeliverReportsWhatTheServerSays() throws {
        let admin = try AdminHarness()
        let id = "11111111-2222-4333-8444-555555555555"
        let queued = try events(admin, ["redeliver", id, "--destination", "billing"])
        #expect(queued.status == 0, "\(queued.stderr)")
        #expect(queued.stdout.contains("queued: \(id) goes to billing again"), "\(queued.stdout)")
        #expect(admin.backend.redeliveries.map(\.event) == [id])
        admin.backend.update { $0.redeliveryOutcome = .deadLettered(letterId: "dl-7") }
        let refused = try events(admin, ["redeliver", id, "--destination", "billing"])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("redelivering \(id) to billing failed"), "\(refused.stderr)")
        #expect(refused.stderr.contains("replay the dead letter"), "\(refused.stderr)")
    }
}
