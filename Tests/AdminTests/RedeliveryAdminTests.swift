import Foundation
import Testing
import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// Redelivery on the admin listener (SPEC "Delivery controls", Redeliver): each outcome's
/// status and sentence, malformed requests refused before the backend hears of them, and the
/// event view's button, over a `FakeBackend`.
@Suite struct RedeliveryAdminTests {
    private let id = "0b7a1c2e-5d6f-4a8b-9c0d-1e2f3a4b5c6d"

    @Test func eachOutcomeHasItsStatusAndSentence() throws {
        let admin = try AdminHarness()
        let cases: [(RedeliveryOutcome, Int, String)] = [
            (.queued, 202, ""),
            (.unknownEvent, 404, "is not known to this gateway"),
            (.unknownDestination, 404, "There is no destination billing."),
            (.stillPending, 409, "is still being delivered to billing"),
            (.deadLettered(letterId: "dl-1"), 409, "(dl-1); replay the dead letter"),
            (.bodyNoLongerHeld, 409, "receives Apple's body"),
            (.notDeliverable("it was not routed to billing"), 409, "was never delivered (it was not routed to billing)"),
            (.failed("the cluster server did not answer"), 503, "was not redelivered: the cluster server did not answer"),
        ]
        for (outcome, status, sentence) in cases {
            admin.backend.update { $0.redeliveryOutcome = outcome }
            let answer = try admin.curl("/api/events/\(id)/redeliver", method: "POST", headers: [admin.bearer, "Content-Type: application/json"],
                                        body: #"{"destination":"billing"}"#)
            #expect(answer.status == status, "\(outcome): \(answer.body)")
            if status == 202 {
                #expect(answer.json == ["event": .string(id), "destination": "billing", "redelivery": "queued"])
            } else {
                #expect(answer.json?["message"]?.stringValue?.contains(sentence) == true, "\(outcome): \(answer.body)")
            }
        }
        #expect(admin.backend.redeliveries.count == cases.count)
        #expect(admin.backend.redeliveries.allSatisfy { $0.event == id && $0.destination == "billing" })
    }

    @Test func malformedRequestsNeverReachTheBackend() throws {
        let admin = try AdminHarness()
        let bodies = ["", "not json", "[]", "{}", #"{"destination":null}"#, #"{"destination":7}"#, #"{"destination":""}"#,
                      #"{"destination":"a b"}"#, #"{"destination":"\#(String(repeating: "x", count: 65))"}"#]
        for body in bodies {
            let answer = try admin.curl("/api/events/\(id)/redeliver", method: "POST", headers: [admin.bearer], body: body)
            #expect(answer.status == 400, "\(body): \(answer.body)")
        }
        let badId = try admin.curl("/api/events/not_an_id/redeliver", method: "POST", headers: [admin.bearer],
                                   body: #"{"destination":"billing"}"#)
        #expect(badId.status == 400)
        let get = try admin.curl("/api/events/\(id)/redeliver", headers: [admin.bearer])
        #expect(get.status == 405 && get.headers["allow"] == "POST")
        let anonymous = try admin.curl("/api/events/\(id)/redeliver", method: "POST", body: #"{"destination":"billing"}"#)
        #expect(anonymous.status == 401)
        #expect(admin.backend.redeliveries.isEmpty)
    }

    @Test func theEventViewOffersRedeliveryWhereItWasDelivered() throws {
        let admin = try AdminHarness()
        let notification = try FakeBackend.notification(id: id, productId: "p", type: "DID_RENEW", subtype: nil, destination: "billing")
        admin.backend.update {
            $0.events[id] = EventDeliveryState(notification: notification, deliveries: [
                .init(destination: "billing", phase: .delivered, attempts: [], nextAttempt: nil, deadLetterId: nil),
                .init(destination: "ledger", phase: .pending, attempts: [], nextAttempt: nil, deadLetterId: nil),
            ])
        }
        let jar = try CookieJar()
        _ = try jar.logIn(admin)
        let page = try admin.curl("/events/\(id)", extra: jar.arguments).body
        #expect(page.components(separatedBy: #"action="/ui/redeliver""#).count == 2, "one button: the delivered destination's")
        let csrf = try #require(csrfToken(in: page))
        let forged = try admin.curl("/ui/redeliver", method: "POST", body: "event=\(id)&destination=billing", extra: jar.arguments)
        #expect(forged.status == 403 && admin.backend.redeliveries.isEmpty)
        let sent = try admin.curl("/ui/redeliver", method: "POST", body: "event=\(id)&destination=billing&csrf=\(csrf)", extra: jar.arguments)
        #expect(sent.status == 303 && sent.headers["location"] == "/events/\(id)?done=redelivered")
        #expect(admin.backend.redeliveries.map(\.destination) == ["billing"])
        let after = try admin.curl("/events/\(id)?done=redelivered", extra: jar.arguments).body
        #expect(after.contains("Redelivery queued"))
        admin.backend.update { $0.redeliveryOutcome = .stillPending }
        let pending = try admin.curl("/ui/redeliver", method: "POST", body: "event=\(id)&destination=ledger&csrf=\(csrf)", extra: jar.arguments)
        #expect(pending.headers["location"] == "/events/\(id)?done=stillpending")
    }
}
