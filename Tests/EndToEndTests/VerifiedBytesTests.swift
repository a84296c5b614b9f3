import Foundation
import Testing
import StoreRelayCore
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayTestSupport

/// The gateway forwards only what it verified (security review, finding 1): a body that JSON
/// readers could read two ways is refused, and what leaves the gateway (`format apple`,
/// `raw`, a dead letter's `appleBody`) is rebuilt from the verified JWS, never the received
/// bytes; a V1 body leaves without its shared secret.
@Suite("Forward only verified bytes", .serialized)
struct VerifiedBytesTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    private func gateway(_ body: String, environment: [String: String] = [:]) throws -> Gateway {
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-verified-bytes")
        return try Gateway(config: Gateway.bareConfig("trust-root ./test-root.pem\n" + body), directory: directory,
                           environment: environment)
    }

    /// The JWS inside `{"signedPayload":"…"}`.
    private func jws(of body: String) throws -> String {
        try #require(try JSONValue.parse(body)["signedPayload"]?.stringValue)
    }

    /// A signed notification whose payload says REFUND but whose signature is zeros.
    private func forgedRefund(like genuine: String) throws -> String {
        let parts = try jws(of: genuine).split(separator: ".")
        let payload = Base64.urlEncode(Array(#"{"notificationType":"REFUND","notificationUUID":"f0f0f0f0-0000-4000-8000-000000000000","version":"2.0","signedDate":1,"data":{"bundleId":"com.acme.journal","environment":"Sandbox"}}"#.utf8))
        return "\(parts[0]).\(payload).\(Base64.urlEncode([UInt8](repeating: 0, count: 64)))"
    }

    @Test func aBodyWithTwoSignedPayloadsIsRefusedAndNothingIsForwarded() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("apple", sink.url("/apple"), options: "format apple"))
            route * * * -> apple
            """)
        let genuine = try signer.body(type: "DID_RENEW")
        let forged = try forgedRefund(like: genuine)
        for body in [
            #"{"signedPayload":"\#(forged)","signedPayload":"\#(try jws(of: genuine))"}"#,
            #"{"signedPayload":"\#(try jws(of: genuine))","signedPayload":"\#(forged)"}"#,
            #"{"signedPayload":"\#(try jws(of: genuine))","x":{"a":1,"a":2}}"#,
        ] {
            let answer = try gateway.post(json: body)
            #expect(answer.status == 400, "\(answer.body)")
            #expect(answer.json?["error"]?.stringValue == "malformed")
            #expect(answer.json?["message"]?.stringValue?.contains("duplicate member name") == true, "\(answer.body)")
        }
        // The genuine notification alone is still new: nothing of the refused bodies was kept.
        let accepted = try gateway.post(json: genuine)
        #expect(accepted.json?["status"]?.stringValue == "accepted", "\(accepted.body)")
        #expect(sink.waitFor { $0.count == 1 })
        #expect(sink.requests(path: "/apple").map { $0["body"]?.stringValue } == [genuine])
    }

    @Test func aDuplicateKeyInsideTheSignedPayloadIsRefused() throws {
        let gateway = try self.gateway("destination all file ./data/queues/all\nroute * * * -> all")
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let jws = try signer.sign(payload: """
            {"notificationType":"DID_RENEW","notificationType":"REFUND","notificationUUID":"\(UUID().uuidString.lowercased())",\
            "version":"2.0","signedDate":\(now),"data":{"bundleId":"com.acme.journal","environment":"Sandbox"}}
            """)
        let answer = try gateway.post(signedPayload: jws)
        #expect(answer.status == 400, "\(answer.body)")
        #expect(answer.json?["error"]?.stringValue == "malformed")
        #expect(answer.json?["message"]?.stringValue?.contains("duplicate member name") == true, "\(answer.body)")
    }

    @Test func extraEnvelopeKeysAreNeverForwarded() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("apple", sink.url("/apple"), options: "format apple"))
            \(webhookDestination("raw", sink.url("/raw"), options: "include-raw yes"))
            route * * DID_RENEW -> apple, raw
            """)
        let renewal = try signer.body(type: "DID_RENEW")
        let unrouted = try signer.body(type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        func smuggled(_ body: String) throws -> String {
            #"{"notification_type":"REFUND","password":"guess","unified_receipt":{"status":0},"signedPayload":"\#(try jws(of: body))"}"#
        }
        #expect(try gateway.post(json: smuggled(renewal)).json?["status"]?.stringValue == "accepted")
        #expect(try gateway.post(json: smuggled(unrouted)).json?["status"]?.stringValue == "accepted")
        #expect(sink.waitFor { $0.count == 2 })

        let canonical = #"{"signedPayload":"\#(try jws(of: renewal))"}"#
        #expect(sink.requests(path: "/apple").first?["body"]?.stringValue == canonical)
        let raw = try JSONValue.parse(try #require(sink.requests(path: "/raw").first?["body"]?.stringValue))
        #expect(raw["raw"]?.stringValue == canonical)
        #expect(gateway.waitForDeadLetters { $0.count == 1 })
        let letter = try #require(gateway.deadLetters.first)
        #expect(letter["reason"]?.stringValue == "unrouted")
        #expect(letter["appleBody"]?.stringValue == #"{"signedPayload":"\#(try jws(of: unrouted))"}"#)
        #expect(!gateway.journalContains("unified_receipt"))
    }

    @Test func aV1BodyLeavesWithoutItsSharedSecret() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            shared-secret ${V1_SECRET}
            \(webhookDestination("apple", sink.url("/apple"), options: "format apple"))
            route * * * -> apple
            """, environment: ["V1_SECRET": "s3cret-v1-do-not-forward"])
        let body = """
            {"notification_type":"DID_RENEW","password":"s3cret-v1-do-not-forward","environment":"Sandbox",\
            "bid":"com.acme.journal","bvrs":"7","auto_renew_status":"true",\
            "unified_receipt":{"environment":"Sandbox","status":0,"latest_receipt_info":[{"product_id":"com.acme.journal.monthly",\
            "transaction_id":"1000000000000002","original_transaction_id":"1000000000000001",\
            "purchase_date_ms":"1700000000000","expires_date_ms":"1702592000000","quantity":"1"}]}}
            """
        let answer = try gateway.post(json: body)
        #expect(answer.json?["status"]?.stringValue == "accepted", "\(answer.body)")
        #expect(sink.waitFor { $0.count == 1 })
        let forwarded = try JSONValue.parse(try #require(sink.requests(path: "/apple").first?["body"]?.stringValue))
        #expect(forwarded["password"] == nil)
        #expect(forwarded["notification_type"]?.stringValue == "DID_RENEW")
        #expect(forwarded["unified_receipt"]?["latest_receipt_info"]?.arrayValue?.first?["transaction_id"]?.stringValue
            == "1000000000000002")
        #expect(!gateway.journalContains("s3cret-v1-do-not-forward"))
    }
}

/// Say what was not verified (security review, point 4): Xcode data accepted unverified by
/// opt-in says so in the event and a header; a verified event says `true`; a gateway that
/// accepts every bundle id says so at start.
@Suite("Verified flag", .serialized)
struct VerifiedFlagTests {
    @Test func unverifiedXcodeDataIsMarkedAndVerifiedDataIsToo() throws {
        let signer = try NotificationSigner(authority: TestCertificateAuthority())
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-verified-flag")
        let gateway = try Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            environments sandbox xcode
            \(webhookDestination("all", sink.url("/all")))
            route * * * -> all
            """), directory: directory)
        #expect(gateway.process.waitForLog { $0["warning"]?.stringValue?.hasPrefix("no app is declared") == true } != nil)

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let xcodeID = UUID().uuidString.lowercased()
        // Signed by a key no root vouches for: Xcode's local testing signs like that.
        let stranger = try P256PrivateKey.generate()
        let header = Base64.urlEncode(Array(#"{"alg":"ES256","x5c":["AAAA","AAAA","AAAA"]}"#.utf8))
        let payload = Base64.urlEncode(Array("""
            {"notificationType":"TEST","notificationUUID":"\(xcodeID)","version":"2.0","signedDate":\(now),\
            "data":{"environment":"Xcode","bundleId":"com.acme.journal"}}
            """.utf8))
        let xcode = header + "." + payload + "." + Base64.urlEncode(try stranger.signES256(Array((header + "." + payload).utf8)))
        #expect(try gateway.post(signedPayload: xcode).json?["status"]?.stringValue == "accepted")
        let sandboxID = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: sandboxID)).json?["status"]?.stringValue == "accepted")
        #expect(sink.waitFor { $0.count == 2 })

        for (id, verified) in [(xcodeID, false), (sandboxID, true)] {
            let request = try #require(sink.requests.first { $0["headers"]?["webhook-id"]?.stringValue == id })
            #expect(request["headers"]?["storerelay-verified"]?.stringValue == String(verified), "\(id)")
            let event = try JSONValue.parse(try #require(request["body"]?.stringValue))
            #expect(event["verified"] == .bool(verified), "\(id)")
        }
    }

    @Test func declaredAppsSilenceTheWarning() throws {
        let gateway = try Gateway(config: Gateway.config("app com.acme.journal"))
        _ = gateway.process.waitForLog(timeout: 2) { $0["message"]?.stringValue == "started" }
        #expect(!gateway.process.logLines.contains { $0.contains("no app is declared") })
    }
}
