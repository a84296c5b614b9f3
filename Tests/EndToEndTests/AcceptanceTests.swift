import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `storerelay serve` as a child process, notifications posted with curl: signed by the test
/// CA (trusted with `trust-root`), and, where ../shared/vectors is, Apple's real ones.
@Suite("Acceptance end to end", .serialized)
struct AcceptanceTests {
    @Test func acceptsANotificationOnceThenAnswersDuplicate() throws {
        let uuid = UUID().uuidString.lowercased()
        let body = try testSigner.body(uuid: uuid)
        let gateway = try Gateway(config: Gateway.trustingConfig(), directory: Gateway.trustingDirectory())
        let first = try gateway.post(json: body)
        #expect(first.status == 200)
        #expect(first.json?["status"]?.stringValue == "accepted")
        #expect(first.json?["id"]?.stringValue == uuid)
        #expect(gateway.journalContains(uuid))

        let second = try gateway.post(json: body)
        #expect(second.status == 200)
        #expect(second.json?["status"]?.stringValue == "duplicate")
        #expect(second.json?["id"]?.stringValue == uuid)
    }

    /// Every real vector that carries a signedDate verifies with the built-in Apple root; #01
    /// has none, so it is checked at the current time, when its leaf has expired (as Apple's
    /// own library does).
    @Test(.requiresAppleVectors) func everyRealNotificationIsAcceptedButTheUndatedExpiredOne() throws {
        let files = Vectors.files(in: "real/v2-notifications")
        try #require(!files.isEmpty, "no real/v2-notifications in \(TestPaths.vectors?.path ?? "")")
        let gateway = try Gateway()
        for file in files {
            let response = try gateway.post(signedPayload: try #require(Vectors.text(file)))
            let uuid = Vectors.manifestEntry(file)?["facts"]?["notificationUUID"]?.stringValue
            if file.contains("/01_") {
                #expect(response.status == 401, "\(file)")
                #expect(response.json?["error"]?.stringValue == "signature")
            } else {
                #expect(response.status == 200, "\(file): \(response.body)")
                #expect(response.json?["status"]?.stringValue == "accepted", "\(file)")
                #expect(response.json?["id"]?.stringValue == uuid, "\(file)")
            }
        }
    }

    /// Apple's own notifications with a tampered payload fail the signature check.
    @Test(.requiresAppleVectors) func rejectsApplesTamperedNotifications() throws {
        let tampered = Vectors.files(in: "negative")
        try #require(!tampered.isEmpty, "no negative vectors in \(TestPaths.vectors?.path ?? "")")
        let gateway = try Gateway()
        for file in tampered {
            let response = try gateway.post(signedPayload: try #require(Vectors.text(file)))
            #expect(response.status == 401, "\(file)")
            #expect(response.json?["error"]?.stringValue == "signature")
            #expect(response.json?["message"]?.stringValue?.isEmpty == false)
        }
    }

    /// A payload changed under its signature, and a chain from a root nobody trusts, are
    /// refused on a gateway that trusts the test CA; bodies that are not Apple's shape are 400.
    @Test func rejectsTamperedAndMalformedBodies() throws {
        let authority = testSigner.authority
        let genuine = try signedPayload(of: testSigner.body())
        let untrustedRoot = try TestChainTests.notification(uuid: UUID().uuidString.lowercased(), ca: authority, variant: .unknownRoot)
        let gateway = try Gateway(config: Gateway.trustingConfig(), directory: Gateway.trustingDirectory())
        for jws in [try tampered(genuine), untrustedRoot] {
            let response = try gateway.post(signedPayload: jws)
            #expect(response.status == 401, "\(response.body)")
            #expect(response.json?["error"]?.stringValue == "signature")
            #expect(response.json?["message"]?.stringValue?.isEmpty == false)
        }
        let malformed = [
            "not json", "[]", "{}", #"{"signedPayload":42}"#, #"{"signedPayload":"a.b.c"}"#,
            #"{"signedPayload":"only-one-segment"}"#, #"{"other":"field"}"#, "",
        ]
        for body in malformed {
            let response = try gateway.post(json: body)
            #expect(response.status == 400, "\(body)")
            #expect(response.json?["error"]?.stringValue == "malformed", "\(body)")
        }
        // Nothing of that reached the journal; the genuine notification still would.
        for segment in gateway.journalSegments {
            let text = String(decoding: try Data(contentsOf: segment), as: UTF8.self)
            #expect(!text.contains("signedPayload"))
        }
        #expect(try gateway.post(signedPayload: genuine).json?["status"]?.stringValue == "accepted")
    }

    @Test func healthRoutesAndUnknownRoutes() throws {
        let gateway = try Gateway()
        #expect(try Curl.get(gateway.baseURL + "/healthz").status == 200)
        let ready = try Curl.get(gateway.baseURL + "/readyz")
        #expect(ready.status == 200)
        #expect(try Curl.get(gateway.baseURL + "/nope").status == 404)
        let wrongMethod = try CommandRunner.run("curl", ["-sS", "-i", gateway.notificationURL])
        #expect(wrongMethod.stdout.hasPrefix("HTTP/1.1 405"))
        #expect(wrongMethod.stdout.lowercased().contains("allow: post"))
        let head = try CommandRunner.run("curl", ["-sS", "-I", gateway.baseURL + "/healthz"])
        #expect(head.stdout.hasPrefix("HTTP/1.1 200"))
    }

    @Test func quarantinesNotificationsThatAreNotForThisGateway() throws {
        let gateway = try Gateway(config: Gateway.trustingConfig("""
            path /appstore/production production
            environments production sandbox
            app com.acme.journal {
                apple-id 1
            }
            """), directory: Gateway.trustingDirectory())
        // An app that is not declared while apps are declared.
        let undeclaredId = UUID().uuidString.lowercased()
        let undeclared = try gateway.post(json: try testSigner.body(uuid: undeclaredId, bundleId: "com.other.app"))
        #expect(undeclared.status == 200)
        #expect(undeclared.json?["status"]?.stringValue == "quarantined")
        #expect(undeclared.json?["id"]?.stringValue == undeclaredId)
        // A production notification whose appAppleId (1234567890) differs from the declared apple-id.
        let mismatchId = UUID().uuidString.lowercased()
        let production = try testSigner.body(uuid: mismatchId, type: "CONSUMPTION_REQUEST", environment: "Production")
        let mismatch = try gateway.post(json: production)
        #expect(mismatch.json?["status"]?.stringValue == "quarantined")
        // A sandbox notification posted on the path bound to production.
        let wrongPath = try gateway.post(json: try testSigner.body(type: "TEST"), path: "/appstore/production")
        #expect(wrongPath.status == 200)
        #expect(wrongPath.json?["status"]?.stringValue == "quarantined")
        // The declared app in sandbox on the default path is accepted.
        #expect(try gateway.post(json: try testSigner.body()).json?["status"]?.stringValue == "accepted")
        // Quarantined notifications are journaled, and Apple's retry is a duplicate.
        #expect(gateway.journalContains(mismatchId))
        #expect(try gateway.post(json: production).json?["status"]?.stringValue == "duplicate")
    }

    @Test func quarantinesEnvironmentsNotAccepted() throws {
        let gateway = try Gateway(config: Gateway.trustingConfig("environments production"), directory: Gateway.trustingDirectory())
        let response = try gateway.post(json: try testSigner.body(type: "EXPIRED", subtype: "VOLUNTARY", environment: "Sandbox"))
        #expect(response.status == 200)
        #expect(response.json?["status"]?.stringValue == "quarantined")
        let production = try gateway.post(json: try testSigner.body(type: "EXPIRED", subtype: "VOLUNTARY", environment: "Production"))
        #expect(production.json?["status"]?.stringValue == "accepted")
    }

    @Test func verifiesV1NotificationsWithTheSharedSecret() throws {
        let v1 = Self.v1Body(password: "s3cret-primary")
        let wrongSecret = Self.v1Body(password: "not-the-secret")
        let gateway = try Gateway(config: Gateway.config("shared-secret ${PRIMARY_SECRET}"),
                                  environment: ["PRIMARY_SECRET": "s3cret-primary"])
        let rejected = try gateway.post(json: wrongSecret)
        #expect(rejected.status == 401)
        #expect(rejected.json?["error"]?.stringValue == "signature")
        let accepted = try gateway.post(json: v1)
        #expect(accepted.status == 200, "\(accepted.body)")
        #expect(accepted.json?["status"]?.stringValue == "accepted")
        let id = try #require(accepted.json?["id"]?.stringValue)
        #expect(try gateway.post(json: v1).json?["id"]?.stringValue == id)
        #expect(try gateway.post(json: v1).json?["status"]?.stringValue == "duplicate")
    }

    /// A V1 body shaped like Apple's `responseBodyV1` (a DID_CHANGE_RENEWAL_STATUS with one
    /// receipt), carrying `password`.
    static func v1Body(password: String) -> String {
        """
        {"notification_type":"DID_CHANGE_RENEWAL_STATUS","password":"\(password)","environment":"PROD",\
        "bid":"com.acme.journal","bvrs":"42","auto_renew_status":"false","auto_renew_product_id":"monthly",\
        "auto_renew_status_change_date_ms":"1606292800000","unified_receipt":{"environment":"Production",\
        "latest_receipt":"ZmFrZV9yZWNlaXB0","status":0,"latest_receipt_info":[{"quantity":"1","product_id":"monthly",\
        "transaction_id":"1000000746095599","original_transaction_id":"1000000723811158",\
        "purchase_date_ms":"1606292762000","original_purchase_date_ms":"1606292727000",\
        "expires_date_ms":"1606293062000","web_order_line_item_id":"1000000057713932","is_trial_period":"false"}],\
        "pending_renewal_info":[{"auto_renew_product_id":"monthly","original_transaction_id":"1000000723811158",\
        "product_id":"monthly","auto_renew_status":"0","is_in_billing_retry_period":"0"}]}}
        """
    }
}

/// A notification replayed long after Apple signed it (security review, point 7): past the
/// dedupe window its id may be forgotten, so it is kept but not fanned out again. It is
/// signed 60 days ago under a chain valid since then (`TestCertificateAuthority.backdated`).
@Suite("Stale replays", .serialized)
struct StaleReplayTests {
    @Test func aNotificationOlderThanTheWindowIsQuarantinedAsStale() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-stale")
        let ca = try TestPaths.makeTemporaryDirectory("storerelay-backdated-ca")
        let (rootPEM, chain) = try TestCertificateAuthority.backdated(daysAgo: 400, in: ca)
        try rootPEM.write(to: directory.appendingPathComponent("test-root.pem"), atomically: true, encoding: .utf8)
        let uuid = UUID().uuidString.lowercased()
        let signed = Int64(Date().addingTimeInterval(-60 * 86_400).timeIntervalSince1970 * 1000)
        let transaction = try TestCertificateAuthority.signJWS(payload: """
            {"transactionId":"2000000000000042","originalTransactionId":"2000000000000001","bundleId":"com.acme.journal",\
            "productId":"com.acme.journal.monthly","purchaseDate":\(signed - 1000),"expiresDate":\(signed + 2_592_000_000),\
            "type":"Auto-Renewable Subscription","environment":"Sandbox","signedDate":\(signed)}
            """, chain: chain)
        let jws = try TestCertificateAuthority.signJWS(payload: """
            {"notificationType":"DID_RENEW","notificationUUID":"\(uuid)","version":"2.0","signedDate":\(signed),\
            "data":{"appAppleId":1234567890,"bundleId":"com.acme.journal","bundleVersion":"42","environment":"Sandbox",\
            "signedTransactionInfo":"\(transaction)","status":1}}
            """, chain: chain)
        let gateway = try Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            destination all file ./data/queues/all
            route * * * -> all
            """, dedupeWindow: "30d"), directory: directory)
        let answer = try gateway.post(signedPayload: jws)
        #expect(answer.status == 200, "\(answer.body)")
        #expect(answer.json?["status"]?.stringValue == "quarantined")
        #expect(gateway.journalContains(uuid))
        #expect(gateway.waitForDeadLetters { letters in
            letters.contains { $0["reason"]?.stringValue == "quarantined" && $0["detail"]?.stringValue?.hasPrefix("stale:") == true }
        })
        #expect(gateway.fileQueueLines("data/queues/all").isEmpty)
    }
}
