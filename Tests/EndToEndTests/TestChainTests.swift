import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// Notifications signed by a test CA shaped like Apple's, trusted through `trust-root`.
@Suite("Test certificate chains end to end", .serialized)
struct TestChainTests {
    static func notification(
        uuid: String, ca: TestCertificateAuthority, variant: TestCertificateAuthority.Variant, environment: String = "Production"
    ) throws -> String {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let transaction = try ca.signJWS(payload: """
            {"transactionId":"1000000000000001","originalTransactionId":"1000000000000001",\
            "bundleId":"com.acme.journal","productId":"com.acme.journal.monthly","purchaseDate":\(now - 1000),\
            "expiresDate":\(now + 2_592_000_000),"type":"Auto-Renewable Subscription","environment":"\(environment)",\
            "signedDate":\(now)}
            """, variant: variant)
        return try ca.signJWS(payload: """
            {"notificationType":"SUBSCRIBED","subtype":"INITIAL_BUY","notificationUUID":"\(uuid)",\
            "version":"2.0","signedDate":\(now),"data":{"appAppleId":1234567890,"bundleId":"com.acme.journal",\
            "bundleVersion":"42","environment":"\(environment)","signedTransactionInfo":"\(transaction)","status":1}}
            """, variant: variant)
    }

    @Test func onlyTheValidChainUnderTheTrustedRootIsAccepted() throws {
        let ca = try TestCertificateAuthority()
        let directory = try Gateway.directory(trusting: ca, "storerelay-chain")
        let gateway = try Gateway(config: Gateway.config("""
            trust-root ./test-root.pem
            app com.acme.journal {
                apple-id 1234567890
            }
            """), directory: directory)
        for variant in TestCertificateAuthority.Variant.allCases {
            let uuid = UUID().uuidString.lowercased()
            let response = try gateway.post(signedPayload: try Self.notification(uuid: uuid, ca: ca, variant: variant))
            // x5c[2] is never trusted: the intermediate is anchored on the configured roots, as
            // Apple's libraries do, so a chain carrying some other root there still verifies.
            if variant == .valid || variant == .mismatchedX5CRoot {
                #expect(response.status == 200, "\(variant): \(response.body)")
                #expect(response.json?["status"]?.stringValue == "accepted")
                #expect(response.json?["id"]?.stringValue == uuid)
            } else {
                #expect(response.status == 401, "\(variant): \(response.body)")
                #expect(response.json?["error"]?.stringValue == "signature", "\(variant)")
            }
        }
        // Without the trust-root line the same valid chain is not trusted.
        let untrusting = try Gateway()
        let response = try untrusting.post(signedPayload: try Self.notification(uuid: UUID().uuidString.lowercased(), ca: ca, variant: .valid))
        #expect(response.status == 401)
    }

    /// A dev or test CA named for sandbox (`trust-root FILE sandbox`) cannot sign production
    /// notifications, even with a chain it already vouched for in sandbox.
    @Test func aRootNamedForSandboxDoesNotVouchForProduction() throws {
        let ca = try TestCertificateAuthority()
        let directory = try Gateway.directory(trusting: ca, "storerelay-chain-sandbox")
        let gateway = try Gateway(config: Gateway.config("""
            trust-root ./test-root.pem sandbox
            app com.acme.journal {
                apple-id 1234567890
            }
            """), directory: directory)
        let sandbox = try gateway.post(signedPayload: try Self.notification(
            uuid: UUID().uuidString.lowercased(), ca: ca, variant: .valid, environment: "Sandbox"))
        #expect(sandbox.status == 200, "\(sandbox.body)")
        let production = try gateway.post(signedPayload: try Self.notification(
            uuid: UUID().uuidString.lowercased(), ca: ca, variant: .valid))
        #expect(production.status == 401, "\(production.body)")
        #expect(production.json?["error"]?.stringValue == "signature")
        #expect(production.json?["message"]?.stringValue?.contains("trusted root") == true, "\(production.body)")
    }

    /// Issue 18: once the outer signature is proven Apple's, a notification this build cannot
    /// read (an environment or container newer than it, nested data for another app) is kept:
    /// stored, answered 200, dead-lettered with the reason, never fanned out or replayed.
    @Test func appleSignedNotificationsThisBuildCannotReadAreKept() throws {
        let ca = try TestCertificateAuthority()
        let directory = try Gateway.directory(trusting: ca, "storerelay-chain-unreadable")
        let gateway = try Gateway(config: Gateway.config("trust-root ./test-root.pem"), directory: directory)
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let staging = UUID().uuidString.lowercased(), container = UUID().uuidString.lowercased()
        let mismatch = UUID().uuidString.lowercased()
        let otherApp = try ca.signJWS(payload: #"{"transactionId":"9","bundleId":"com.other","environment":"Production","signedDate":\#(now)}"#)
        let bodies = [
            staging: #"{"notificationType":"TEST","notificationUUID":"\#(staging)","signedDate":\#(now),"data":{"environment":"Staging","bundleId":"com.acme.journal"}}"#,
            container: #"{"notificationType":"NEW_KIND","notificationUUID":"\#(container)","signedDate":\#(now),"futureContainer":{"environment":"Production"}}"#,
            mismatch: #"{"notificationType":"DID_RENEW","notificationUUID":"\#(mismatch)","signedDate":\#(now),"data":{"environment":"Production","bundleId":"com.acme.journal","signedTransactionInfo":"\#(otherApp)"}}"#,
        ]
        for (uuid, payload) in bodies {
            let jws = try ca.signJWS(payload: payload)
            let answer = try gateway.post(signedPayload: jws)
            #expect(answer.status == 200, "\(answer.body)")
            #expect(answer.json?["status"]?.stringValue == "quarantined", "\(answer.body)")
            #expect(answer.json?["id"]?.stringValue == uuid)
            #expect(gateway.journalContains(uuid))
            // Apple's retry is a duplicate, as for any stored notification.
            #expect(try gateway.post(signedPayload: jws).json?["status"]?.stringValue == "duplicate")
        }
        #expect(gateway.waitForDeadLetters { $0.count == 3 })
        let letters = Dictionary(uniqueKeysWithValues: gateway.deadLetters.compactMap { letter in
            letter["eventId"]?.stringValue.map { ($0, letter) }
        })
        for uuid in bodies.keys {
            #expect(letters[uuid]?["reason"]?.stringValue == "quarantined")
            #expect(letters[uuid]?["detail"]?.stringValue?.hasPrefix("not understood: ") == true, "\(String(describing: letters[uuid]))")
        }
        #expect(letters[staging]?["detail"]?.stringValue?.contains("Staging") == true)
        #expect(letters[mismatch]?["detail"]?.stringValue?.contains("com.other") == true)
        // Nothing reached a destination, and a replay is refused with the reason.
        #expect(gateway.fileQueueLines("data/queues/all").isEmpty)
        let adminPort = try gateway.process.waitForPort(listener: "admin")
        let token = try String(contentsOf: directory.appendingPathComponent("data/admin.token"), encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let letterId = try #require(letters[staging]?["id"]?.stringValue)
        let replay = try Curl.post("http://127.0.0.1:\(adminPort)/api/dead-letters/\(letterId)/replay", json: "{}",
                                   headers: ["Authorization: Bearer \(token)"])
        #expect(replay.status == 409, "\(replay.body)")
        #expect(replay.json?["message"]?.stringValue?.contains("still cannot read") == true, "\(replay.body)")

        // Not proven to be Apple's: still refused, and nothing is kept.
        let forgedUUID = UUID().uuidString.lowercased()
        let forged = try ca.signJWS(payload: #"{"notificationType":"TEST","notificationUUID":"\#(forgedUUID)","signedDate":\#(now),"data":{"environment":"Staging"}}"#, variant: .unknownRoot)
        #expect(try gateway.post(signedPayload: forged).status == 401)
        #expect(!gateway.journalContains(forgedUUID))
    }
}
