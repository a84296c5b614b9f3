import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct AuthenticationTests {
    @Test func apiNeedsTheRightBearerTokenAndMetricsAreOpen() throws {
        let admin = try AdminHarness()
        let missing = try admin.curl("/api/status")
        #expect(missing.status == 401)
        #expect(missing.json?["error"]?.stringValue == "unauthorized")
        #expect(missing.json?["message"]?.stringValue?.isEmpty == false)
        #expect(missing.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
        // Four wrong tokens: one fewer than starts a pause (AdminHardeningTests has the pause).
        for (path, wrong) in [("/api/status", "Authorization: Bearer nope"), ("/api/status", "Authorization: Bearer \(admin.token)x"),
                              ("/api/dead-letters", "Authorization: Basic \(admin.token)"),
                              ("/api/status", "Authorization: Bearer \(admin.token.dropLast())")] {
            #expect(try admin.curl(path, headers: [wrong]).status == 401, "\(wrong)")
        }
        #expect(try admin.curl("/api/dead-letters/replay", method: "POST", body: "{}").status == 401)
        #expect(admin.backend.replayAllCalls.isEmpty, "an unauthorized POST does nothing")
        let right = try admin.curl("/api/status", headers: [admin.bearer])
        #expect(right.status == 200)
        #expect(try admin.curl("/api/status", headers: ["authorization: bearer \(admin.token)"]).status == 200,
                "the scheme is case-insensitive")

        let metrics = try admin.curl("/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.body == admin.metricsText)
        #expect(metrics.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
    }

    @Test func unknownPathsAndMethods() throws {
        let admin = try AdminHarness()
        #expect(try admin.curl("/api/nothing", headers: [admin.bearer]).status == 404)
        #expect(try admin.curl("/api/dead-letters/", headers: [admin.bearer]).status == 404)
        let wrongMethod = try admin.curl("/api/status", method: "POST", headers: [admin.bearer])
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.json?["error"]?.stringValue == "method_not_allowed")
        #expect(wrongMethod.headers["allow"] == "GET, HEAD")
        let letter = try admin.curl("/api/dead-letters/dl-0123", method: "PUT", headers: [admin.bearer])
        #expect(letter.status == 405 && letter.headers["allow"] == "DELETE, GET, HEAD")
        #expect(try admin.curl("/metrics", method: "DELETE").status == 405)
    }
}

@Suite struct StatusAndEventTests {
    @Test func statusListsDestinationsWithTheirDeadLetterCounts() throws {
        let admin = try AdminHarness()
        admin.backend.update {
            $0.statuses = [FakeBackend.status("billing", depth: 3, breaker: .open, lastError: "HTTP 503"),
                           FakeBackend.status("ledger", kind: "file")]
            $0.ready = false
        }
        try admin.backend.add(destination: "billing")
        try admin.backend.add(destination: "billing")
        try admin.backend.add(destination: nil, reason: .unrouted)
        let json = try #require(try admin.curl("/api/status", headers: [admin.bearer]).json)
        #expect(json["ready"] == false)
        let destinations = try #require(json["destinations"]?.arrayValue)
        #expect(destinations.count == 2)
        let billing = destinations[0]
        #expect(billing["name"] == "billing" && billing["kind"] == "webhook")
        #expect(billing["queueDepth"] == 3 && billing["inFlight"] == 1 && billing["breaker"] == "open")
        #expect(billing["lastError"] == "HTTP 503" && billing["lastErrorAt"]?.stringValue?.hasSuffix("Z") == true)
        #expect(billing["lastSuccess"]?.stringValue != nil && billing["deadLetters"] == 2)
        #expect(destinations[1]["deadLetters"] == 0 && destinations[1]["lastError"] == .null)
        #expect(json["deadLetters"] == 3)
    }

    @Test func eventsAreFoundValidatedOrMissing() throws {
        let admin = try AdminHarness()
        let id = "6a3d8f9c-1b2e-4c5d-8e7f-0123456789ab"
        let notification = try FakeBackend.notification(id: id, productId: "p", type: "TEST", subtype: nil, destination: "billing")
        admin.backend.update {
            $0.events[id] = EventDeliveryState(notification: notification, deliveries: [
                .init(destination: "billing", phase: .pending, attempts: [], nextAttempt: Timestamp(milliseconds: 0), deadLetterId: nil),
            ])
        }
        let found = try admin.curl("/api/events/\(id)", headers: [admin.bearer])
        #expect(found.status == 200)
        #expect(found.json?["id"]?.stringValue == id)
        #expect(found.json?["deliveries"]?.arrayValue?.first?["state"] == "pending")
        let unknown = try admin.curl("/api/events/6a3d8f9c-0000-0000-0000-000000000000", headers: [admin.bearer])
        #expect(unknown.status == 404 && unknown.json?["error"] == "not_found")
        let bad = try admin.curl("/api/events/abc%2F..%2F..", headers: [admin.bearer])
        #expect(bad.status == 400 && bad.json?["error"] == "bad_request")
        #expect(try admin.curl("/api/events/" + String(repeating: "a", count: 65), headers: [admin.bearer]).status == 400)
    }
}

@Suite struct DeadLetterAPITests {
    /// What the operator has in hand finds the letters (issue 13, point 1): an event id, a
    /// subscription's original transaction id, a transaction id, a bundle id, a type, and a
    /// time range given as ISO-8601 times or ages.
    @Test func searchByWhatTheOperatorHasInHand() throws {
        let admin = try AdminHarness()
        let now = Timestamp.now().milliseconds
        let old = try admin.backend.add(eventId: "11111111-aaaa-4aaa-8aaa-000000000001", type: "DID_RENEW",
                                        createdAt: Timestamp(milliseconds: now - 3 * 86_400_000),
                                        originalTransactionId: "1000000000000001", transactionId: "1000000000000011")
        let recent = try admin.backend.add(eventId: "22222222-bbbb-4bbb-8bbb-000000000002", type: "REFUND", subtype: nil,
                                           createdAt: Timestamp(milliseconds: now - 3_600_000),
                                           originalTransactionId: "1000000000000002", transactionId: "1000000000000022",
                                           bundleId: "com.acme.other")
        func ids(_ query: String) throws -> [String] {
            let answer = try admin.curl("/api/dead-letters?" + query, headers: [admin.bearer])
            #expect(answer.status == 200, "\(query): \(answer.body)")
            return answer.json?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } ?? []
        }
        #expect(try ids("eventId=11111111-aaaa-4aaa-8aaa-000000000001") == [old.id])
        #expect(try ids("originalTransactionId=1000000000000002") == [recent.id])
        #expect(try ids("transactionId=1000000000000011") == [old.id])
        #expect(try ids("bundleId=com.acme.other") == [recent.id])
        #expect(try ids("type=REFUND") == [recent.id])
        #expect(try ids("since=24h") == [recent.id])
        #expect(try ids("until=24h") == [old.id])
        let iso = Timestamp(milliseconds: now - 86_400_000).iso8601
        #expect(try ids("since=" + iso + "&type=DID_RENEW").isEmpty)
        #expect(try ids("eventId=no-such-event").isEmpty)
        for query in ["since=yesterday", "until=2026-13-01T00:00:00Z", "eventId=" + String(repeating: "x", count: 129)] {
            let answer = try admin.curl("/api/dead-letters?" + query, headers: [admin.bearer])
            #expect(answer.status == 400, "\(query)")
        }
    }

    /// `GET /api/events?originalTransactionId=` lists one subscription's events.
    @Test func eventsOfOneSubscription() throws {
        let admin = try AdminHarness()
        for (index, subscription) in ["3000000000000001", "3000000000000001", "3000000000000002"].enumerated() {
            let id = "33333333-cccc-4ccc-8ccc-00000000000\(index)"
            let notification = try FakeBackend.notification(id: id, productId: "p", type: "DID_RENEW", subtype: nil,
                                                            destination: "billing", originalTransactionId: subscription)
            admin.backend.update {
                $0.events[id] = EventDeliveryState(notification: notification, deliveries: [
                    .init(destination: "billing", phase: .delivered, attempts: [], nextAttempt: nil, deadLetterId: nil),
                ])
            }
        }
        let answer = try admin.curl("/api/events?originalTransactionId=3000000000000001", headers: [admin.bearer])
        #expect(answer.status == 200)
        let items = answer.json?["items"]?.arrayValue ?? []
        #expect(items.compactMap { $0["id"]?.stringValue } == ["33333333-cccc-4ccc-8ccc-000000000000", "33333333-cccc-4ccc-8ccc-000000000001"])
        #expect(items.first?["deliveries"]?.arrayValue?.first?["state"] == "delivered")
        // Without originalTransactionId it is the event log's list, which this double does not keep.
        #expect(try admin.curl("/api/events", headers: [admin.bearer]).status == 501)
        #expect(try admin.curl("/api/events?originalTransactionId=", headers: [admin.bearer]).status == 400)
        #expect(try admin.curl("/api/events?originalTransactionId=1").status == 401)
    }

    @Test func listPagesFiltersAndRejectsBadParameters() throws {
        let admin = try AdminHarness()
        var ids: [String] = []
        for index in 0..<7 {
            let letter = try admin.backend.add(destination: index % 2 == 0 ? "billing" : "ledger",
                                               reason: index < 5 ? .exhausted : .rejected,
                                               createdAt: Timestamp(milliseconds: 1_700_000_000_000 + Int64(index)))
            ids.append(letter.id)
        }
        let all = try #require(try admin.curl("/api/dead-letters", headers: [admin.bearer]).json)
        #expect(all["items"]?.arrayValue?.count == 7)
        #expect(all["nextCursor"] == .null)
        let first = try #require(all["items"]?.arrayValue?.first)
        for key in ["id", "eventId", "destination", "reason", "createdAt", "attempts", "event"] {
            #expect(first[key] != nil, "record has \(key)")
        }
        #expect(first["id"]?.stringValue == ids[6], "newest first")

        var seen: [String] = []
        var cursor: String?
        repeat {
            let query = "limit=3" + (cursor.map { "&cursor=" + $0 } ?? "")
            let page = try #require(try admin.curl("/api/dead-letters?" + query, headers: [admin.bearer]).json)
            let items = try #require(page["items"]?.arrayValue)
            #expect(items.count <= 3)
            seen += items.compactMap { $0["id"]?.stringValue }
            cursor = page["nextCursor"]?.stringValue
        } while cursor != nil
        #expect(seen == ids.reversed())

        let billing = try admin.curl("/api/dead-letters?destination=billing", headers: [admin.bearer]).json
        #expect(billing?["items"]?.arrayValue?.count == 4)
        let rejected = try admin.curl("/api/dead-letters?reason=rejected&destination=", headers: [admin.bearer]).json
        #expect(rejected?["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == [ids[6], ids[5]])

        for query in ["reason=late", "limit=0", "limit=501", "limit=ten", "cursor=zzz", "cursor=" + Base64.urlEncode(Array("1:../../x".utf8))] {
            let answer = try admin.curl("/api/dead-letters?" + query, headers: [admin.bearer])
            #expect(answer.status == 400, "\(query)")
            #expect(answer.json?["error"] == "bad_request" && answer.json?["message"]?.stringValue != nil)
        }
        #expect(try admin.curl("/api/dead-letters?limit=500", headers: [admin.bearer]).status == 200)
    }

    @Test func showReplayAndDeleteOneLetter() throws {
        let admin = try AdminHarness()
        let letter = try admin.backend.add(destination: "billing")
        let other = try admin.backend.add(destination: "ledger")
        let shown = try admin.curl("/api/dead-letters/\(letter.id)", headers: [admin.bearer])
        #expect(shown.status == 200)
        #expect(shown.json?["id"]?.stringValue == letter.id)
        #expect(shown.json?["event"]?["subscription"]?["productId"] == "com.acme.journal.monthly")
        #expect(shown.json?["attempts"]?.arrayValue?.count == 2)

        let replayed = try admin.curl("/api/dead-letters/\(letter.id)/replay", method: "POST", headers: [admin.bearer])
        #expect(replayed.status == 200)
        #expect(replayed.json == ["replayed": 1, "destinations": ["billing"]])
        #expect(admin.backend.replayed == [letter.id])
        let again = try admin.curl("/api/dead-letters/\(letter.id)/replay", method: "POST", headers: [admin.bearer])
        #expect(again.status == 404 && again.json?["error"] == "not_found")

        admin.backend.update { $0.outcomes[other.id] = .alreadyReplaying }
        let busy = try admin.curl("/api/dead-letters/\(other.id)/replay", method: "POST", headers: [admin.bearer])
        #expect(busy.status == 409 && busy.json?["error"] == "conflict")
        admin.backend.update { $0.outcomes[other.id] = .noRoute }
        #expect(try admin.curl("/api/dead-letters/\(other.id)/replay", method: "POST", headers: [admin.bearer]).status == 409)

        let deleted = try admin.curl("/api/dead-letters/\(other.id)", method: "DELETE", headers: [admin.bearer])
        #expect(deleted.status == 204 && deleted.body.isEmpty)
        #expect(admin.backend.store.count == 0)
        #expect(try admin.curl("/api/dead-letters/\(other.id)", method: "DELETE", headers: [admin.bearer]).status == 404)
        #expect(try admin.curl("/api/dead-letters/\(other.id)", headers: [admin.bearer]).status == 404)
    }

    @Test func replayMatchingPassesFiltersAndValidatesTheBody() throws {
        let admin = try AdminHarness()
        try admin.backend.add(destination: "billing", reason: .exhausted)
        try admin.backend.add(destination: "billing", reason: .rejected)
        try admin.backend.add(destination: "ledger", reason: .exhausted)
        let one = try admin.curl("/api/dead-letters/replay", method: "POST", headers: [admin.bearer],
                                 body: #"{"destination":"billing","reason":"rejected"}"#)
        #expect(one.status == 200 && one.json == ["replayed": 1, "stale": 0])
        #expect(admin.backend.replayAllCalls.last.map { $0.0 == "billing" && $0.1 == .stored(.rejected) } == true)
        for body in ["", "[]", #"{"reason":"late"}"#, #"{"destination":5}"#, "{nope"] {
            let answer = try admin.curl("/api/dead-letters/replay", method: "POST", headers: [admin.bearer], body: body)
            #expect(answer.status == 400, "\(body)")
        }
        #expect(admin.backend.replayAllCalls.count == 1, "invalid bodies replay nothing")
        let rest = try admin.curl("/api/dead-letters/replay", method: "POST", headers: [admin.bearer],
                                  body: #"{"destination":null,"reason":null}"#)
        #expect(rest.json == ["replayed": 2, "stale": 0])
        #expect(admin.backend.store.count == 0)
    }

    @Test func pathTraversalNeverReachesTheFileSystem() throws {
        let admin = try AdminHarness()
        // A file the traversal would reach if the id were used as a path.
        let secret = admin.backend.directory + "/secret.json"
        try Data(#"{"secret":true}"#.utf8).write(to: URL(fileURLWithPath: secret))
        let letter = try admin.backend.add()
        for path in ["/api/dead-letters/..%2F..%2Fetc%2Fpasswd", "/api/dead-letters/..%2Fsecret",
                     "/api/dead-letters/%2e%2e%2fsecret", "/api/dead-letters/dl-\(String(repeating: "0", count: 31))%2F"] {
            let answer = try admin.curl(path, headers: [admin.bearer])
            #expect(answer.status == 400 || answer.status == 404, "\(path)")
            #expect(!answer.body.contains("secret") && !answer.body.contains("root:"))
            #expect(try admin.curl(path, method: "DELETE", headers: [admin.bearer]).status >= 400)
        }
        for path in ["/api/dead-letters/../../etc/passwd", "/api/dead-letters/../secret", "/api/dead-letters/../../../../etc/passwd",
                     "/api/dead-letters/\(letter.id)/../../secret", "/api/events/../dead-letters/\(letter.id)"] {
            let answer = try admin.python("GET", path)
            #expect(answer.status == 404 || answer.status == 400, "\(path)")
            #expect(!answer.body.contains("secret") && !answer.body.contains("root:"))
            #expect(try admin.python("DELETE", path).status >= 400)
        }
        #expect(FileManager.default.fileExists(atPath: secret))
        #expect(admin.backend.store.count == 1)
    }
}
