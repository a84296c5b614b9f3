import Foundation
import Testing
import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// Pause and resume on the admin listener (SPEC "Delivery controls"): the API, the page's
/// buttons and `storerelay destination`, over a `FakeBackend`.
@Suite struct PauseAdminTests {
    private func admin() throws -> AdminHarness {
        let admin = try AdminHarness()
        admin.backend.update { $0.statuses = [FakeBackend.status("billing", depth: 3), FakeBackend.status("ledger", kind: "file")] }
        return admin
    }

    @Test func pauseAndResumeThroughTheAPI() throws {
        let admin = try admin()
        let paused = try admin.curl("/api/destinations/billing/pause", method: "POST", headers: [admin.bearer])
        #expect(paused.status == 200)
        #expect(paused.json == ["destination": "billing", "paused": true, "changed": true])
        let again = try admin.curl("/api/destinations/billing/pause", method: "POST", headers: [admin.bearer])
        #expect(again.json?["changed"] == false, "pausing twice changes nothing and is no error")

        let listing = try #require(try admin.curl("/api/destinations", headers: [admin.bearer]).json?["items"]?.arrayValue)
        #expect(listing.map { $0["name"]?.stringValue } == ["billing", "ledger"])
        #expect(listing.map { $0["state"]?.stringValue } == ["paused", "active"])
        #expect(listing.first?["paused"] == true && listing.first?["queueDepth"]?.int64Value == 3)
        let status = try #require(try admin.curl("/api/status", headers: [admin.bearer]).json)
        #expect(status["destinations"]?.arrayValue?.first?["state"] == "paused")

        let resumed = try admin.curl("/api/destinations/billing/resume", method: "POST", headers: [admin.bearer])
        #expect(resumed.json == ["destination": "billing", "paused": false, "changed": true])
        #expect(admin.backend.destinationStatuses.allSatisfy { !$0.paused })
    }

    @Test func unknownDestinationsBadNamesMethodsAndTokens() throws {
        let admin = try admin()
        let unknown = try admin.curl("/api/destinations/nowhere/pause", method: "POST", headers: [admin.bearer])
        #expect(unknown.status == 404 && unknown.json?["error"] == "not_found")
        #expect(unknown.json?["message"]?.stringValue == "There is no destination nowhere.")
        #expect(try admin.curl("/api/destinations/nowhere/resume", method: "POST", headers: [admin.bearer]).status == 404)
        let get = try admin.curl("/api/destinations/billing/pause", headers: [admin.bearer])
        #expect(get.status == 405 && get.headers["allow"] == "POST")
        let post = try admin.curl("/api/destinations", method: "POST", headers: [admin.bearer])
        #expect(post.status == 405 && post.headers["allow"] == "GET, HEAD")
        #expect(try admin.curl("/api/destinations/billing/stop", method: "POST", headers: [admin.bearer]).status == 404)
        #expect(try admin.curl("/api/destinations/bill%2Fing/pause", method: "POST", headers: [admin.bearer]).status == 400)
        #expect(try admin.curl("/api/destinations/billing/pause", method: "POST").status == 401)
        #expect(admin.backend.destinationStatuses.allSatisfy { !$0.paused }, "nothing was paused")
    }

    @Test func thePageShowsTheStateAndItsButtonPausesAndResumes() throws {
        let admin = try admin()
        let jar = try CookieJar()
        _ = try jar.logIn(admin)
        let page = try admin.curl("/", extra: jar.arguments).body
        #expect(page.contains(#"action="/ui/pause""#) && !page.contains(#"action="/ui/resume""#))
        #expect(page.contains("active"))
        let csrf = try #require(csrfToken(in: page))
        #expect(try admin.curl("/ui/pause", method: "POST", body: "destination=billing", extra: jar.arguments).status == 403)
        let pause = try admin.curl("/ui/pause", method: "POST", body: "destination=billing&csrf=\(csrf)", extra: jar.arguments)
        #expect(pause.status == 303 && pause.headers["location"]?.contains("done=paused") == true)
        #expect(admin.backend.destinationStatuses.first?.paused == true)
        let after = try admin.curl("/?done=paused", extra: jar.arguments).body
        #expect(after.contains(">paused<") && after.contains(#"action="/ui/resume""#))
        #expect(after.contains("Paused: the destination starts no attempt and keeps its backlog until resumed."))
        let resume = try admin.curl("/ui/resume", method: "POST", body: "destination=billing&csrf=\(csrf)", extra: jar.arguments)
        #expect(resume.headers["location"]?.contains("done=resumed") == true)
        #expect(admin.backend.destinationStatuses.first?.paused == false)
        let unknown = try admin.curl("/ui/pause", method: "POST", body: "destination=nowhere&csrf=\(csrf)", extra: jar.arguments)
        #expect(unknown.headers["location"]?.contains("done=nodestination") == true)
    }

    @Test func theCommandLinePausesResumesAndLists() throws {
        let admin = try admin()
        func destination(_ arguments: [String]) throws -> CommandResult {
            try CommandRunner.storerelay(["destination"] + arguments + ["--admin", admin.baseURL, "--token", admin.token])
        }
        let pause = try destination(["pause", "billing"])
        #expect(pause.status == 0 && pause.stdout == "paused billing\n", "\(pause.stderr)")
        #expect(try destination(["pause", "billing"]).stdout == "billing was already paused\n")
        let table = try destination(["list"])
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first?.hasPrefix("NAME") == true && lines.first?.contains("STATE") == true)
        #expect(lines[1].hasPrefix("billing") && lines[1].contains("paused") && lines[1].contains("webhook"))
        #expect(lines[2].hasPrefix("ledger") && lines[2].contains("active"))
        let one = try destination(["list", "billing", "--json"])
        #expect(try JSONValue.parse(one.stdout).arrayValue?.map { $0["state"] } == ["paused"])
        let resume = try destination(["resume", "billing"])
        #expect(resume.status == 0 && resume.stdout == "resumed billing\n")
        #expect(try destination(["resume", "billing"]).stdout == "billing was not paused\n")

        let unknown = try destination(["pause", "nowhere"])
        #expect(unknown.status == 1 && unknown.stderr == "storerelay destination: there is no destination nowhere\n")
        let missing = try destination(["pause"])
        #expect(missing.status == 2 && missing.stderr.contains("pause needs a destination NAME"))
        #expect(try destination(["stop", "billing"]).status == 2)
        #expect(try destination(["list", "nowhere"]).status == 1)
    }
}
