import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// Redelivery end to end (SPEC "Delivery controls", Redeliver): an event delivered already
/// goes to one destination again with its own `webhook-id`, a valid signature and
/// `StoreRelay-Redelivery: 1`; every other case is refused with the reason, and sends nothing.
@Suite("Redelivery end to end", .serialized)
struct RedeliveryEndToEndTests {
    let ca: TestCertificateAuthority
    init() throws { ca = try TestCertificateAuthority() }

    private func post(_ gateway: Gateway) throws -> String {
        let uuid = UUID().uuidString.lowercased()
        let answer = try gateway.post(signedPayload: TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid))
        #expect(answer.status == 200)
        return uuid
    }

    private func redeliver(_ admin: AdminGateway, _ id: String, to destination: String) throws -> CurlResponse {
        try admin.post("/api/events/\(id)/redeliver", json: #"{"destination":"\#(destination)"}"#)
    }

    private func requests(_ sink: WebhookSink, _ path: String, _ id: String) -> [JSONValue] {
        sink.requests(path: path).filter { $0["headers"]?["webhook-id"]?.stringValue == id }
    }

    @Test func aDeliveredEventGoesAgainWithItsOwnIdAndTheRedeliveryMark() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: ca, "storerelay-redeliver")
        let admin = try AdminGateway(Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            \(webhookDestination("hook", sink.url("/ok")))
            \(webhookDestination("other", sink.url("/other")))
            route * * * -> hook, other
            """), directory: directory))
        let id = try post(admin.gateway)
        #expect(sink.waitFor { _ in requests(sink, "/ok", id).count == 1 && requests(sink, "/other", id).count == 1 })
        #expect(pollUntil(timeout: 15) { admin.deliveryState(id, "hook") == "delivered" })

        let answer = try redeliver(admin, id, to: "hook")
        #expect(answer.status == 202, "\(answer.body)")
        #expect(answer.json?["redelivery"] == "queued" && answer.json?["destination"] == "hook")
        #expect(sink.waitFor { _ in requests(sink, "/ok", id).count == 2 })
        let (first, again) = (requests(sink, "/ok", id)[0], requests(sink, "/ok", id)[1])
        #expect(first["headers"]?["storerelay-redelivery"] == nil)
        #expect(again["headers"]?["storerelay-redelivery"] == "1")
        #expect(again["signatureValid"] == true, "signed like every delivery")
        #expect(again["body"] == first["body"], "the same event")
        Thread.sleep(forTimeInterval: 0.5)
        #expect(requests(sink, "/other", id).count == 1, "only the destination asked for")
        #expect(pollUntil(timeout: 15) { admin.deliveryState(id, "hook") == "delivered" })
        #expect(admin.gateway.deadLetters.isEmpty)
    }

    @Test func whatCannotBeRedeliveredIsRefusedWithTheReason() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: ca, "storerelay-redeliver-refusals")
        let admin = try AdminGateway(Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            \(webhookDestination("hook", sink.url("/ok")))
            \(webhookDestination("bad", sink.url("/bad"), options: "max-attempts 1"))
            \(webhookDestination("raw", sink.url("/raw"), options: "format apple"))
            \(webhookDestination("unrouted", sink.url("/unrouted")))
            \(webhookDestination("held", sink.url("/held")))
            route * * * -> hook, bad, raw, held
            """), directory: directory))
        #expect(try admin.post("/api/destinations/held/pause").status == 200)
        let id = try post(admin.gateway)
        #expect(pollUntil(timeout: 15) { admin.deliveryState(id, "bad") == "dead-lettered" && admin.deliveryState(id, "raw") == "delivered" })

        let cases: [(destination: String, status: Int, says: String)] = [
            ("nowhere", 404, "There is no destination nowhere"),
            ("unrouted", 409, "was never delivered"),
            ("held", 409, "still being delivered"),
            ("bad", 409, "replay the dead letter"),
        ]
        for refusal in cases {
            let answer = try redeliver(admin, id, to: refusal.destination)
            #expect(answer.status == refusal.status, "\(refusal.destination): \(answer.body)")
            #expect(answer.body.contains(refusal.says), "\(refusal.destination): \(answer.body)")
        }
        let unknown = try redeliver(admin, UUID().uuidString.lowercased(), to: "hook")
        #expect(unknown.status == 404 && unknown.body.contains("not known"))
        for body in ["", "[]", #"{"destination":7}"#, #"{"destination":"a b"}"#, "{}"] {
            let answer = try admin.post("/api/events/\(id)/redeliver", json: body)
            #expect(answer.status == 400, "\(body): \(answer.body)")
        }
        #expect(try admin.post("/api/events/not%20an%20id/redeliver", json: #"{"destination":"hook"}"#).status == 400)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(requests(sink, "/ok", id).count == 1, "no refusal sent anything")
        #expect(requests(sink, "/unrouted", id).isEmpty && requests(sink, "/held", id).isEmpty)

        // Unfinished (held waits), the event is still in the journal with Apple's body: a
        // `format apple` destination can be sent it again. Once it finishes, only its
        // normalized form is remembered, and that destination is refused.
        #expect(try redeliver(admin, id, to: "raw").status == 202)
        #expect(sink.waitFor { _ in requests(sink, "/raw", id).count == 2 })
        #expect(requests(sink, "/raw", id).map(\.["body"]) == [requests(sink, "/raw", id)[0]["body"], requests(sink, "/raw", id)[0]["body"]])
        #expect(try admin.post("/api/destinations/held/resume").status == 200)
        #expect(pollUntil(timeout: 15) { admin.deliveryState(id, "held") == "delivered" && admin.deliveryState(id, "raw") == "delivered" })
        let bodyGone = try redeliver(admin, id, to: "raw")
        #expect(bodyGone.status == 409 && bodyGone.body.contains("Apple's body"), "\(bodyGone.body)")
        #expect(try redeliver(admin, id, to: "hook").status == 202, "a normalized destination still can")
        #expect(sink.waitFor { _ in requests(sink, "/ok", id).count == 2 })
    }
}
