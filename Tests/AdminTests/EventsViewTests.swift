import Foundation
import Testing
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// The events view (`/events`) and the home page's search over the event log (SPEC "Event
/// log, search and operational events", The page), over a `FakeBackend` holding a log.
@Suite struct EventsViewTests {
    private let subscription = "2000000812345678"

    /// 60 events: three of one subscription (one dead-lettered at billing), the rest others'.
    private func admin() throws -> AdminHarness {
        let admin = try AdminHarness()
        let now = Timestamp.now().milliseconds
        var logged: [EventSummary] = (0..<57).map { index in
            EventSummary(id: String(format: "00000000-0000-4000-8000-%012d", index), receivedAt: Timestamp(milliseconds: now - Int64(index) * 60_000),
                         type: "DID_RENEW", environment: "production", bundleId: "com.acme.journal",
                         originalTransactionId: "30000000\(index)", transactionId: "40000000\(index)",
                         deliveries: [.init(destination: "billing", state: .delivered)])
        }
        for (index, type) in ["SUBSCRIBED", "DID_RENEW", "DID_FAIL_TO_RENEW"].enumerated() {
            logged.append(EventSummary(id: "aaaaaaaa-0000-4000-8000-00000000000\(index)",
                                       receivedAt: Timestamp(milliseconds: now - Int64(index + 1) * 86_400_000), type: type,
                                       environment: "sandbox", bundleId: "com.acme.journal", originalTransactionId: subscription,
                                       transactionId: "50000000\(index)",
                                       deliveries: [.init(destination: "billing", state: index == 2 ? .deadLettered : .delivered),
                                                    .init(destination: "ledger", state: .pending)]))
        }
        admin.backend.update { $0.logged = logged }
        return admin
    }

    private func page(_ admin: AdminHarness, _ path: String) throws -> (status: Int, body: String) {
        let jar = try CookieJar()
        _ = try jar.logIn(admin)
        let response = try admin.curl(path, extra: jar.arguments)
        return (response.status, response.body)
    }

    private func rows(_ body: String) -> Int { body.components(separatedBy: "<a href=\"/events/").count - 1 }

    @Test func listsNewestFirstAPageAtATime() throws {
        let admin = try admin()
        let first = try page(admin, "/events")
        #expect(first.status == 200)
        #expect(rows(first.body) == 50, "the default page size")
        #expect(first.body.contains(#"<form class="filters" method="get" action="/events">"#))
        let next = try #require(first.body.range(of: #"<a href="/events?cursor="#))
        let link = String(first.body[next.lowerBound...].dropFirst(9).prefix { $0 != "\"" }).replacingOccurrences(of: "&amp;", with: "&")
        let second = try page(admin, link)
        #expect(rows(second.body) == 10 && !second.body.contains("Next page"))
        let newest = try #require(first.body.range(of: "/events/00000000-0000-4000-8000-000000000000"))
        let older = try #require(first.body.range(of: "/events/00000000-0000-4000-8000-000000000001"))
        #expect(newest.lowerBound < older.lowerBound)
    }

    @Test func anyIdFindsItsEventsAndASubscriptionShowsItsTimeline() throws {
        let admin = try admin()
        let timeline = try page(admin, "/events?q=\(subscription)")
        #expect(rows(timeline.body) == 3 && timeline.body.contains("Subscription <code>\(subscription)</code>"))
        #expect(timeline.body.contains("billing: dead-lettered") && timeline.body.contains("ledger: pending"))
        let byTransaction = try page(admin, "/events?q=500000001")
        #expect(rows(byTransaction.body) == 1 && byTransaction.body.contains("/events/aaaaaaaa-0000-4000-8000-000000000001"))
        #expect(!byTransaction.body.contains("Subscription <code>"), "one event is not called a timeline by its own id")
        let filtered = try page(admin, "/events?environment=sandbox&state=billing:dead-lettered")
        #expect(rows(filtered.body) == 1 && filtered.body.contains("DID_FAIL_TO_RENEW"))
        #expect(filtered.body.contains(#"<option selected>sandbox</option>"#), "the form shows the filters in force")
        let none = try page(admin, "/events?q=nothing-here")
        #expect(none.body.contains("No event matches."))
    }

    @Test func badFiltersSayWhyAndNoLogSaysSo() throws {
        let admin = try admin()
        for query in ["environment=moon", "state=lost", "since=yesterday", "limit=0", "colour=red", "cursor=x"] {
            let answer = try page(admin, "/events?\(query)")
            #expect(answer.status == 400 && answer.body.contains(#"class="alert bad""#), "\(query)")
        }
        let injected = try page(admin, "/events?q=%3Cscript%3Ealert(1)%3C%2Fscript%3E")
        #expect(!injected.body.contains("<script>") && injected.body.contains("&lt;script&gt;"))
        admin.backend.update { $0.logged = nil }
        #expect(try page(admin, "/events").body.contains("This gateway keeps no event log."))
    }

    @Test func theHomeSearchFindsDeliveredEventsInTheLog() throws {
        let admin = try admin()
        let home = try page(admin, "/?q=\(subscription)")
        #expect(home.status == 200)
        #expect(home.body.contains("Events matching <code>\(subscription)</code>"))
        #expect(rows(home.body) >= 3 && home.body.contains("billing: delivered"))
        #expect(home.body.contains(#"href="/events?q=\#(subscription)""#), "a link to the events view")
        #expect(home.body.contains(#"<a href="/events">Events</a>"#), "the header links the events view")
        #expect(try page(admin, "/events").status == 200)
        let anonymous = try admin.curl("/events")
        #expect(anonymous.status == 303 && anonymous.headers["location"] == "/login")
    }
}
