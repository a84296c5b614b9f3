import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// A curl cookie jar in a temporary file: a browser's session as far as the server can tell.
struct CookieJar {
    let path: String
    init() throws { path = try TestPaths.makeTemporaryDirectory("storerelay-jar").path + "/cookies" }
    var arguments: [String] { ["-b", path, "-c", path] }
    var contents: String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    /// Logs in through the form; returns the login response.
    func logIn(_ admin: AdminHarness, token: String? = nil) throws -> AdminHarness.Response {
        try admin.curl("/login", method: "POST", body: "token=" + (token ?? admin.token), extra: arguments)
    }
}

/// The session's CSRF token, read from the rendered page's forms.
func csrfToken(in page: String) -> String? {
    guard let range = page.range(of: #"name="csrf" value=""#) else { return nil }
    let rest = page[range.upperBound...]
    return rest.firstIndex(of: "\"").map { String(rest[..<$0]) }
}

@Suite struct PageTests {
    @Test func valuesAreEscapedNeverRaw() throws {
        let admin = try AdminHarness()
        let hostile = "<script>alert(1)</script>"
        try admin.backend.add(destination: "billing", productId: hostile, error: "bad \"quote\" & <b>tag</b>")
        admin.backend.update { $0.statuses = [FakeBackend.status("billing", lastError: "<img src=x onerror=alert(2)>")] }
        let page = try admin.curl("/", headers: [admin.bearer])
        #expect(page.status == 200)
        #expect(page.headers["content-type"] == "text/html; charset=utf-8")
        #expect(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"))
        #expect(!page.body.contains(hostile))
        #expect(!page.body.contains("<img"))
        #expect(page.body.contains("bad &quot;quote&quot; &amp; &lt;b&gt;tag&lt;/b&gt;"))
        #expect(!page.body.lowercased().contains("<script"), "the page has no script at all")
        #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(page.headers["cache-control"] == "no-store")
    }

    @Test func pageShowsDestinationsAndTheAppStoreContext() throws {
        let admin = try AdminHarness()
        admin.backend.update { $0.statuses = [FakeBackend.status("billing", depth: 7, breaker: .halfOpen, lastError: "HTTP 503")] }
        let letter = try admin.backend.add(destination: "billing", reason: .rejected, error: "HTTP 410 from billing",
                                           createdAt: Timestamp(milliseconds: Timestamp.now().milliseconds - 3 * 3_600_000))
        let page = try admin.curl("/", headers: [admin.bearer]).body
        for expected in ["billing", "half-open", ">7<", "HTTP 503", letter.id, "3h 0", "rejected", "DID_RENEW/BILLING_RECOVERY",
                         "sandbox", "com.acme.journal", "com.acme.journal.monthly", "2000000123456789", "HTTP 410 from billing",
                         "<td>2</td>", #"action="/ui/replay""#, #"action="/ui/purge""#, #"action="/ui/replay-all""#] {
            #expect(page.contains(expected), "page shows \(expected)")
        }
    }

    @Test func filtersAndPaginationUseTheCursor() throws {
        let admin = try AdminHarness()
        for index in 0..<55 {
            try admin.backend.add(destination: index < 52 ? "billing" : "ledger", reason: .exhausted,
                                  createdAt: Timestamp(milliseconds: 1_700_000_000_000 + Int64(index)))
        }
        let first = try admin.curl("/?destination=billing", headers: [admin.bearer]).body
        #expect(first.components(separatedBy: #"action="/ui/purge""#).count - 1 == 50)
        #expect(first.contains(#"<option value="billing" selected>"#))
        let link = try #require(first.range(of: #"<a href="/?"#).map { first[$0.upperBound...] }.flatMap { rest in
            rest.firstIndex(of: "\"").map { String(rest[..<$0]) } })
        #expect(link.contains("destination=billing") && link.contains("cursor="))
        let second = try admin.curl("/?" + link.replacingOccurrences(of: "&amp;", with: "&"), headers: [admin.bearer]).body
        #expect(second.components(separatedBy: #"action="/ui/purge""#).count - 1 == 2)
        #expect(!second.contains("Next page"))
        #expect(try admin.curl("/?reason=late", headers: [admin.bearer]).status == 400)
        let ledger = try admin.curl("/?destination=ledger&reason=exhausted", headers: [admin.bearer]).body
        #expect(ledger.components(separatedBy: #"action="/ui/purge""#).count - 1 == 3)
    }

    @Test func loginSetsASessionCookieAndTheTokenNeverAppearsInAURL() throws {
        let admin = try AdminHarness()
        let anonymous = try admin.curl("/")
        #expect(anonymous.status == 303 && anonymous.headers["location"] == "/login")
        let form = try admin.curl("/login")
        #expect(form.status == 200 && form.body.contains(#"method="post" action="/login""#))
        #expect(form.body.contains(#"type="password" name="token""#))

        let jar = try CookieJar()
        let wrong = try jar.logIn(admin, token: "not-it")
        #expect(wrong.status == 401 && wrong.body.contains("not the admin token"))
        #expect(wrong.headers["set-cookie"] == nil)

        let login = try jar.logIn(admin)
        #expect(login.status == 303 && login.headers["location"] == "/")
        let cookie = try #require(login.headers["set-cookie"])
        for attribute in ["storerelay_session=", "HttpOnly", "SameSite=Strict", "Path=/", "Max-Age="] {
            #expect(cookie.contains(attribute), "cookie has \(attribute)")
        }
        #expect(!cookie.contains(admin.token), "the cookie is a session id, not the token")
        #expect(!(login.headers["location"] ?? "").contains(admin.token))
        let page = try admin.curl("/", extra: jar.arguments)
        #expect(page.status == 200 && page.body.contains("StoreRelay admin"))
        #expect(!page.body.contains(admin.token))
        #expect(try admin.curl("/login", extra: jar.arguments).status == 303, "logged in: the form sends you on")
        #expect(try admin.curl("/api/status", extra: jar.arguments).status == 401, "the API wants the bearer token")

        // Logging out ends the session server-side: the old cookie no longer works.
        let savedJar = jar.contents
        let logout = try admin.curl("/logout", method: "POST", body: "csrf=" + (csrfToken(in: page.body) ?? ""), extra: jar.arguments)
        #expect(logout.status == 303 && logout.headers["location"] == "/login")
        try savedJar.write(toFile: jar.path, atomically: true, encoding: .utf8)
        #expect(try admin.curl("/", extra: jar.arguments).status == 303)
    }

    @Test func formsWithoutTheCSRFTokenAreRejected() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add()
        let jar = try CookieJar()
        _ = try jar.logIn(admin)
        let page = try admin.curl("/", extra: jar.arguments).body
        let csrf = try #require(csrfToken(in: page))
        #expect(csrf.count == 64)
        let altered = csrf.dropLast() + (csrf.hasSuffix("0") ? "1" : "0")
        for body in ["id=\(letter.id)", "id=\(letter.id)&csrf=", "id=\(letter.id)&csrf=\(altered)", "id=\(letter.id)&csrf=\(csrf)0"] {
            #expect(try admin.curl("/ui/purge", method: "POST", body: body, extra: jar.arguments).status == 403, "\(body)")
            #expect(try admin.curl("/ui/replay", method: "POST", body: body, extra: jar.arguments).status == 403)
        }
        #expect(try admin.curl("/ui/replay-all", method: "POST", body: "", extra: jar.arguments).status == 403)
        #expect(try admin.curl("/ui/purge", method: "POST", body: "id=\(letter.id)&csrf=\(csrf)").status == 401, "no session")
        #expect(admin.backend.store.count == 1 && admin.backend.replayed.isEmpty)

        // Another session's token is not this session's.
        let otherJar = try CookieJar()
        _ = try otherJar.logIn(admin)
        let otherCSRF = try #require(csrfToken(in: try admin.curl("/", extra: otherJar.arguments).body))
        #expect(otherCSRF != csrf)
        #expect(try admin.curl("/ui/purge", method: "POST", body: "id=\(letter.id)&csrf=\(otherCSRF)", extra: jar.arguments).status == 403)
    }

    @Test func replayAndPurgeThroughTheForms() throws {
        let admin = try AdminHarness()
        let first = try admin.backend.add(destination: "billing", reason: .rejected)
        let second = try admin.backend.add(destination: "billing", reason: .exhausted)
        let third = try admin.backend.add(destination: "ledger", reason: .exhausted)
        let fourth = try admin.backend.add(destination: "ledger", reason: .exhausted)
        let jar = try CookieJar()
        _ = try jar.logIn(admin)
        let csrf = try #require(csrfToken(in: try admin.curl("/", extra: jar.arguments).body))

        let replay = try admin.curl("/ui/replay", method: "POST", body: "csrf=\(csrf)&id=\(first.id)&destination=billing",
                                    extra: jar.arguments)
        #expect(replay.status == 303)
        #expect(replay.headers["location"] == "/?destination=billing&done=replayed-1")
        #expect(admin.backend.replayed == [first.id])
        let after = try admin.curl(try #require(replay.headers["location"]), extra: jar.arguments).body
        #expect(after.contains("Replayed 1 dead letter."))
        #expect(!after.contains(first.id) && after.contains(second.id) && !after.contains(third.id))

        let purge = try admin.curl("/ui/purge", method: "POST", body: "csrf=\(csrf)&id=\(second.id)", extra: jar.arguments)
        #expect(purge.status == 303 && purge.headers["location"] == "/?done=purged-1")
        #expect(admin.backend.store.letter(id: second.id) == nil)
        let missing = try admin.curl("/ui/purge", method: "POST", body: "csrf=\(csrf)&id=\(second.id)", extra: jar.arguments)
        #expect(missing.headers["location"] == "/?done=missing")
        let invalid = try admin.curl("/ui/purge", method: "POST", body: "csrf=\(csrf)&id=..%2F..%2Fetc%2Fpasswd", extra: jar.arguments)
        #expect(invalid.headers["location"] == "/?done=invalid")

        let all = try admin.curl("/ui/replay-all", method: "POST", body: "csrf=\(csrf)&destination=ledger&reason=exhausted",
                                 extra: jar.arguments)
        #expect(all.headers["location"] == "/?destination=ledger&reason=exhausted&done=replayed-2")
        #expect(Set(admin.backend.replayed) == [first.id, third.id, fourth.id])
        #expect(admin.backend.store.count == 0)
        let done = try admin.curl("/?done=replayed-2", extra: jar.arguments).body
        #expect(done.contains("Replayed 2 dead letters.") && done.contains("No dead letters match."))
        #expect(!(try admin.curl("/?done=%3Cb%3Ehi", extra: jar.arguments).body.contains("&lt;b&gt;hi")), "only known notices render")
    }

    @Test func bearerAuthWorksForThePageAndItsForms() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add()
        let page = try admin.curl("/", headers: [admin.bearer])
        #expect(page.status == 200 && page.body.contains(letter.id))
        let purge = try admin.curl("/ui/purge", method: "POST", headers: [admin.bearer], body: "id=\(letter.id)")
        #expect(purge.status == 303)
        #expect(admin.backend.store.count == 0)
    }

    /// The page finds a notification by what the operator has in hand (issue 13, point 1):
    /// the search box, the event id linking to its view, and "replay all matching" narrowed
    /// by the search, never widened by filters that do not parse.
    @Test func searchEventViewAndNarrowedReplayAll() throws {
        let admin = try AdminHarness()
        let eventId = "8f2c5d3b-6e7a-4b9c-8d1e-2f3a4b5c6d7e"
        let wanted = try admin.backend.add(eventId: eventId, originalTransactionId: "4000000000000001")
        let other = try admin.backend.add(originalTransactionId: "4000000000000002")
        for query in ["q=" + eventId, "q=4000000000000001", "q=" + wanted.id] {
            let page = try admin.curl("/?" + query, headers: [admin.bearer])
            #expect(page.status == 200)
            #expect(page.body.contains(wanted.id) && !page.body.contains(other.id), "\(query)")
        }
        let listed = try admin.curl("/?q=" + eventId, headers: [admin.bearer])
        // The whole id (cut short on screen, selected whole in one click) and its view beside it.
        #expect(listed.body.contains("<code class=\"copy\" title=\"\(eventId) (click selects the whole id)\">\(eventId)</code> "
            + "<a href=\"/events/\(eventId)\""))
        #expect(listed.body.contains(#"name="q""#) && listed.body.contains(#"value="\#(eventId)""#))

        // The event's view, and a replay from it coming back to it.
        try admin.backend.recordDeadLettered(wanted)
        let view = try admin.curl("/events/" + eventId, headers: [admin.bearer])
        #expect(view.status == 200)
        #expect(view.body.contains("Normalized event") && view.body.contains("HTTP 503") && view.body.contains(wanted.id))
        #expect(try admin.curl("/events/no-such-event", headers: [admin.bearer]).status == 404)
        #expect(try admin.curl("/events/" + eventId).headers["location"] == "/login")
        let replayed = try admin.curl("/ui/replay", method: "POST", headers: [admin.bearer], body: "id=\(wanted.id)&event=\(eventId)")
        #expect(replayed.status == 303 && replayed.headers["location"] == "/events/\(eventId)?done=replayed-1")

        // Forms act on what the page showed: an age is sent as the time it meant then.
        let aged = try admin.curl("/?since=1h", headers: [admin.bearer])
        #expect(aged.body.contains(#"<input type="hidden" name="since" value="20"#), "the form carries the age, not the time")

        // Replay all matching: the search narrows it; filters that do not parse stop it.
        let third = try admin.backend.add(originalTransactionId: "4000000000000003")
        let refused = try admin.curl("/ui/replay-all", method: "POST", headers: [admin.bearer], body: "since=yesterday")
        #expect(refused.headers["location"]?.contains("done=badfilter") == true)
        #expect(admin.backend.store.count == 2)
        let narrowed = try admin.curl("/ui/replay-all", method: "POST", headers: [admin.bearer], body: "q=4000000000000003")
        #expect(narrowed.headers["location"]?.contains("done=replayed-1") == true)
        #expect(admin.backend.store.letter(id: third.id) == nil)
        #expect(admin.backend.store.letter(id: other.id) != nil)
    }
}
