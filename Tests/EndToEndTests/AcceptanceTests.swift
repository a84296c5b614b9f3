import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `storerelay serve` as a child process, real Apple-signed notifications posted with curl.
@Suite("Acceptance end to end", .serialized)
struct AcceptanceTests {
    @Test func acceptsARealNotificationOnceThenAnswersDuplicate() throws {
        guard let jws = Vectors.realNotification("09_sandbox_DID_RENEW") else {
            print(TestPaths.vectorsMissing); return
        }
        let gateway = try Gateway()
        let first = try gateway.post(signedPayload: jws)
        #expect(first.status == 200)
        #expect(first.json?["status"]?.stringValue == "accepted")
        #expect(first.json?["id"]?.stringValue == "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7")
        #expect(gateway.journalContains("1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7"))

        let second = try gateway.post(signedPayload: jws)
        #expect(second.status == 200)
        #expect(second.json?["status"]?.stringValue == "duplicate")
        #expect(second.json?["id"]?.stringValue == "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7")
    }

    /// Every real vector that carries a signedDate verifies with the built-in Apple root; #01
    /// has none, so it is checked at the current time, when its leaf has expired (as Apple's
    /// own library does).
    @Test func everyRealNotificationIsAcceptedButTheUndatedExpiredOne() throws {
        let files = Vectors.files(in: "real/v2-notifications")
        guard !files.isEmpty else { print(TestPaths.vectorsMissing); return }
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

    @Test func rejectsTamperedAndMalformedBodies() throws {
        let tampered = Vectors.files(in: "negative")
        let gateway = try Gateway()
        for file in tampered {
            let response = try gateway.post(signedPayload: try #require(Vectors.text(file)))
            #expect(response.status == 401, "\(file)")
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
        // Nothing of that reached the journal.
        for segment in gateway.journalSegments {
            let text = String(decoding: try Data(contentsOf: segment), as: UTF8.self)
            #expect(!text.contains("signedPayload"))
        }
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
        guard let sandbox = Vectors.realNotification("09_sandbox_DID_RENEW"),
              let production = Vectors.realNotification("03_production_CONSUMPTION_REQUEST"),
              let sandboxTest = Vectors.realNotification("08_sandbox_TEST")
        else { print(TestPaths.vectorsMissing); return }
        let gateway = try Gateway(config: Gateway.config("""
            path /appstore/production production
            environments production sandbox
            app com.jrjj.keysns {
                apple-id 1
            }
            """))
        // An app that is not declared while apps are declared.
        let undeclared = try gateway.post(signedPayload: sandbox)
        #expect(undeclared.status == 200)
        #expect(undeclared.json?["status"]?.stringValue == "quarantined")
        #expect(undeclared.json?["id"]?.stringValue == "1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7")
        // A production notification whose appAppleId differs from the declared apple-id.
        let mismatch = try gateway.post(signedPayload: production)
        #expect(mismatch.json?["status"]?.stringValue == "quarantined")
        // A sandbox notification posted on the path bound to production.
        let wrongPath = try gateway.post(signedPayload: sandboxTest, path: "/appstore/production")
        #expect(wrongPath.status == 200)
        #expect(wrongPath.json?["status"]?.stringValue == "quarantined")
        // Quarantined notifications are journaled, and Apple's retry is a duplicate.
        #expect(gateway.journalContains("cbff6987-b8d9-43d8-b1dc-07fa8c9fd945"))
        #expect(try gateway.post(signedPayload: production).json?["status"]?.stringValue == "duplicate")
    }

    @Test func quarantinesEnvironmentsNotAccepted() throws {
        guard let sandbox = Vectors.realNotification("10_sandbox_EXPIRED") else { print(TestPaths.vectorsMissing); return }
        let gateway = try Gateway(config: Gateway.config("environments production"))
        let response = try gateway.post(signedPayload: sandbox)
        #expect(response.status == 200)
        #expect(response.json?["status"]?.stringValue == "quarantined")
    }

    @Test func verifiesV1NotificationsWithTheSharedSecret() throws {
        guard let v1File = Vectors.files(in: "v1").first, let v1 = Vectors.text(v1File) else {
            print(TestPaths.vectorsMissing); return
        }
        let withSecret = v1.replacingOccurrences(of: "\"********\"", with: "\"s3cret-primary\"")
        let wrongSecret = v1.replacingOccurrences(of: "\"********\"", with: "\"not-the-secret\"")
        #expect(withSecret != v1)
        let gateway = try Gateway(config: Gateway.config("shared-secret ${PRIMARY_SECRET}"),
                                  environment: ["PRIMARY_SECRET": "s3cret-primary"])
        let rejected = try gateway.post(json: wrongSecret)
        #expect(rejected.status == 401)
        #expect(rejected.json?["error"]?.stringValue == "signature")
        let accepted = try gateway.post(json: withSecret)
        #expect(accepted.status == 200, "\(accepted.body)")
        #expect(accepted.json?["status"]?.stringValue == "accepted")
        let id = try #require(accepted.json?["id"]?.stringValue)
        #expect(try gateway.post(json: withSecret).json?["id"]?.stringValue == id)
        #expect(try gateway.post(json: withSecret).json?["status"]?.stringValue == "duplicate")
    }
}

/// A real Apple notification replayed long after Apple sent it (security review, point 7):
/// past the dedupe window its id may be forgotten, so it is kept but not fanned out again.
@Suite("Stale replays", .serialized)
struct StaleReplayTests {
    @Test func aRealNotificationOlderThanTheWindowIsQuarantinedAsStale() throws {
        guard let jws = Vectors.realNotification("09_sandbox_DID_RENEW") else {
            print(TestPaths.vectorsMissing); return
        }
        let gateway = try Gateway(config: Gateway.bareConfig("""
            destination all file ./data/queues/all
            route * * * -> all
            """, dedupeWindow: "30d"))
        let answer = try gateway.post(signedPayload: jws)
        #expect(answer.status == 200)
        #expect(answer.json?["status"]?.stringValue == "quarantined")
        #expect(gateway.journalContains("1a7cdc3d-9360-49c3-ae37-0423e4c6e7c7"))
        #expect(gateway.waitForDeadLetters { letters in
            letters.contains { $0["reason"]?.stringValue == "quarantined" && $0["detail"]?.stringValue?.hasPrefix("stale:") == true }
        })
        #expect(gateway.fileQueueLines("data/queues/all").isEmpty)
    }
}
