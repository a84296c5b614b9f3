import StoreRelayTestSupport
import Testing
@testable import StoreRelayGateway
import StoreRelayStorage
import StoreRelayCore

/// The query parser of `GET /api/events`: what it accepts, every malformed input refused
/// with a message, and random input never crashing it.
@Suite struct EventFiltersTests {
    private let now = Timestamp(milliseconds: 1_800_000_000_000)

    private func parse(_ text: String) throws(DeadLetterFilters.Invalid) -> EventFilters {
        try EventFilters(query: text, defaultLimit: 50, maxLimit: 500, now: now)
    }

    @Test func acceptsEveryFilter() throws {
        let filters = try parse("q=%20otx-1%20&app=com.acme&environment=sandbox&type=DID_RENEW&state=dead-lettered"
            + "&since=2026-11-20T10:15:30Z&until=1h&limit=7&cursor=3-9")
        #expect(filters.query == EventLogQuery(q: "otx-1", app: "com.acme", environment: "sandbox", type: "DID_RENEW",
                                               state: .deadLettered, since: Timestamp(iso8601: "2026-11-20T10:15:30Z"),
                                               until: Timestamp(milliseconds: now.milliseconds - 3_600_000)))
        #expect(filters.limit == 7)
        #expect(filters.cursor?.description == "3-9")
        #expect(try parse("").query == EventLogQuery())
        #expect(try parse("").limit == 50)
        #expect(try parse("app=&q=&state=").query == EventLogQuery(), "empty means any")
        #expect(try parse("state=billing:pending").query == EventLogQuery(state: .pending, destination: "billing"))
        #expect(try parse("state=delivered&destination=ok").query == EventLogQuery(state: .delivered, destination: "ok"))
        #expect(try parse("destination=ok").query == EventLogQuery(destination: "ok"))
    }

    @Test func refusesMalformedInputWithAMessage() {
        let long = String(repeating: "x", count: 129)
        let bad = [
            "state=lost", "state=:pending", "state=ok:", "state=ok:lost", "state=a:pending&destination=b",
            "environment=Production", "environment=moon", "limit=0", "limit=-1", "limit=501", "limit=ten", "limit=1e3",
            "limit=0000001", "cursor=nope", "cursor=1-", "cursor=-1", "cursor=1-2-3", "since=yesterday", "until=tomorrow",
            "since=2026-01-02T00:00:00Z&until=2026-01-01T00:00:00Z", "since=1h&until=1h", "colour=red", "Q=x",
            "q=a&q=b", "limit=1&limit=1", "q=\(long)", "app=\(long)", "type=\(long)", "q=a%0Ab", "app=a%00b",
            "originalTransactionIds=1",
        ]
        for text in bad {
            do {
                _ = try parse(text)
                Issue.record("accepted \(text)")
            } catch {
                #expect(!error.message.isEmpty, "\(text)")
            }
        }
    }

    @Test func randomQueriesNeverCrash() {
        var random = SeededGenerator(seed: 28)
        let pieces = ["q", "app", "environment", "type", "state", "destination", "since", "until", "limit", "cursor", "=", "&",
                      "%", "%2", "%ZZ", "%00", ":", "-", "1", "0", "delivered", "pending", "1h", "sandbox", "+", "é", "\u{0}"]
        for _ in 0..<20_000 {
            let text = (0..<Int.random(in: 0..<12, using: &random)).map { _ in pieces.randomElement(using: &random)! }.joined()
            if let filters = try? parse(text) {
                #expect((1...500).contains(filters.limit))
                if let since = filters.query.since, let until = filters.query.until { #expect(since < until) }
            }
        }
    }
}
