import Foundation
import Testing
import StoreRelayCore
import StoreRelayStorage
import StoreRelayTestSupport

/// Enrichment in the gateway (SPEC "Google Play ... Enrichment"), against the fake Google
/// over HTTPS: the push is answered before Google is asked, the event goes out with
/// `subscription` from the Developer API and `environment` `sandbox` for a test purchase,
/// failures are retried or the event goes out as it was, and a push acknowledged before a
/// crash is enriched after the restart.
@Suite("Google Play enrichment", .serialized, .timeLimit(.minutes(3)),
       .enabled(if: CommandRunner.isAvailable("python3") && CommandRunner.isAvailable("openssl"), "python3 or openssl is not installed"))
struct PlayEnrichmentEndToEndTests {
    static let path = "/play/notifications"

    struct Setup {
        let signer: PlayPushSigner
        let keys: PlayKeySetServer
        let fake: FakeGooglePlayAPI
        let directory: URL

        init(_ script: [JSONValue] = []) throws {
            signer = try PlayPushSigner()
            keys = try PlayKeySetServer(document: try signer.keySetDocument())
            fake = try FakeGooglePlayAPI()
            try fake.control(.object(JSONObject([
                ("subscriptions", .object(JSONObject([
                    ("sub-test", ["kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "DE", "testPurchase": [:]]),
                    ("sub-real", ["kind": "androidpublisher#subscriptionPurchaseV2", "regionCode": "US", "latestOrderId": "GPA.1111-2222-3333-44444"]),
                ]))),
                ("products", ["coins.100/prod-test": ["kind": "androidpublisher#productPurchase", "purchaseType": 0, "purchaseState": 0]]),
                ("script", .array(script)),
            ])))
            directory = try TestPaths.makeTemporaryDirectory("storerelay-play-enrichment")
        }

        var config: String { config(enriching: true) }

        func config(enriching: Bool) -> String {
            Gateway.config("""
                \(keys.configLine)
                \(fake.apiURLLine)
                play \(PlayPushSigner.package) {
                    push-audience \(PlayPushSigner.audience)
                    push-account \(PlayPushSigner.account)
                    \(enriching ? "service-account \(fake.serviceAccountFile)" : "")
                }
                path \(PlayEnrichmentEndToEndTests.path) play
                """)
        }

        /// Posts a push; a 503 while the gateway has not fetched Google's keys yet (it does at
        /// start, in the background) is posted again, as Pub/Sub would.
        func post(_ gateway: Gateway, messageId: String, data: String) throws -> CurlResponse {
            var answer = try postOnce(gateway, messageId: messageId, data: data)
            _ = pollUntil(timeout: 10, interval: 0.1) {
                guard answer.status == 503 else { return true }
                answer = (try? postOnce(gateway, messageId: messageId, data: data)) ?? answer
                return answer.status != 503
            }
            return answer
        }

        func postOnce(_ gateway: Gateway, messageId: String, data: String) throws -> CurlResponse {
            try Curl.post(gateway.baseURL + PlayEnrichmentEndToEndTests.path, json: PlayPushSigner.body(messageId: messageId, data: data),
                          headers: ["Authorization: Bearer \(try signer.validToken())"])
        }
    }

    static func events(_ gateway: Gateway) -> [String: JSONValue] {
        var byId: [String: JSONValue] = [:]
        for line in gateway.fileQueueLines("data/queues/all") {
            if let event = try? JSONValue.parse(line), let id = event["id"]?.stringValue { byId[id] = event }
        }
        return byId
    }

    @Test func eventsGoOutEnrichedAndTestPurchasesAsSandbox() throws {
        // Google's first answer comes late: the push is answered long before it.
        let setup = try Setup([["endpoint": "api", "delayMs": 2500]])
        let gateway = try Gateway(config: setup.config, directory: setup.directory)
        let first = try setup.post(gateway, messageId: "1001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test"))
        #expect(first.status == 200, "\(first.body)")
        #expect(setup.fake.apiRequests.isEmpty && Self.events(gateway).isEmpty, "answered before Google was")
        // Operators see what waits for Google.
        let admin = try AdminGateway(gateway)
        func pending() -> Double? {
            let prefix = "storerelay_play_enrichment_pending "
            return ((try? admin.metrics) ?? "").split(separator: "\n").first { $0.hasPrefix(prefix) }.flatMap { Double($0.dropFirst(prefix.count)) }
        }
        #expect(pending() == 1)
        #expect(try setup.post(gateway, messageId: "1002", data: PlayPushSigner.subscriptionNotification(type: 4, token: "sub-real")).status == 200)
        #expect(try setup.post(gateway, messageId: "1003", data: PlayPushSigner.oneTimeProductNotification(type: 1, token: "prod-test")).status == 200)
        #expect(try setup.post(gateway, messageId: "1004", data: PlayPushSigner.testNotification()).status == 200)
        // A redelivery while the first is still being enriched is a duplicate.
        let again = try setup.post(gateway, messageId: "1001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test"))
        #expect(again.status == 200)

        #expect(gateway.waitForFileQueue("data/queues/all", timeout: 30) { $0.count >= 4 })
        let events = Self.events(gateway)
        #expect(gateway.fileQueueLines("data/queues/all").count == 4, "each event once")
        let test = try #require(events["1001"])
        #expect(test["environment"]?.stringValue == "sandbox")
        #expect(test["subscription"]?["testPurchase"] == .object(JSONObject()))
        #expect(test["subscription"]?["regionCode"]?.stringValue == "DE")
        #expect(test["subscription"]?["originalTransactionId"]?.stringValue == "sub-test")
        let real = try #require(events["1002"])
        #expect(real["environment"]?.stringValue == "production")
        #expect(real["subscription"]?["latestOrderId"]?.stringValue == "GPA.1111-2222-3333-44444")
        let product = try #require(events["1003"])
        #expect(product["environment"]?.stringValue == "sandbox")
        #expect(product["subscription"]?["purchaseType"]?.int64Value == 0)
        let plain = try #require(events["1004"])
        #expect(plain["type"]?.stringValue == "TEST" && plain["environment"]?.stringValue == "production")
        #expect(setup.fake.apiRequests.count == 3, "TEST has no purchase to ask about")
        #expect(setup.fake.tokenRequests.count == 1, "one access token for all of them")
        let inbox = setup.directory.appendingPathComponent("data/play-enrichment/inbox.log").path
        #expect(pollUntil(timeout: 10) { PendingRecordLog.read(inbox)?.isEmpty == true },
                "the inbox is empty once stored: \(PendingRecordLog.read(inbox)?.map(\.id) ?? [])")
        #expect(pollUntil(timeout: 10) { pending() == 0 })
    }

    @Test func failuresAreRetriedAndAPermanentOneDeliversTheEventAsItWas() throws {
        let setup = try Setup([["endpoint": "api", "status": 503, "error": "UNAVAILABLE"]])
        let gateway = try Gateway(config: setup.config, directory: setup.directory)
        #expect(try setup.post(gateway, messageId: "2001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-real")).status == 200)
        #expect(gateway.waitForFileQueue("data/queues/all", timeout: 30) { $0.count >= 1 })
        #expect(Self.events(gateway)["2001"]?["subscription"]?["latestOrderId"] != nil)
        #expect(setup.fake.apiRequests.map { $0["status"]?.int64Value } == [503, 200])

        #expect(try setup.post(gateway, messageId: "2002", data: PlayPushSigner.subscriptionNotification(type: 3, token: "unknown-token")).status == 200)
        #expect(gateway.waitForFileQueue("data/queues/all", timeout: 30) { $0.count >= 2 })
        let unenriched = try #require(Self.events(gateway)["2002"])
        #expect(unenriched["environment"]?.stringValue == "production")
        #expect(unenriched["subscription"]?["latestOrderId"] == nil)
        #expect(unenriched["subscription"]?["originalTransactionId"]?.stringValue == "unknown-token")
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue?.hasPrefix("play enrichment failed") == true } != nil)
        let admin = try gateway.process.waitForPort(listener: "admin", timeout: 20)
        let metrics = try Curl.get("http://127.0.0.1:\(admin)/metrics").body
        #expect(metrics.contains(#"storerelay_play_enrichments_total{app="com.acme.journal",outcome="ok"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"storerelay_play_enrichments_total{app="com.acme.journal",outcome="failed"} 1"#))
    }

    @Test func aPushAcknowledgedBeforeACrashIsEnrichedAfterTheRestart() throws {
        let setup = try Setup([["endpoint": "api", "delayMs": 60_000]])
        var gateway = try Gateway(config: setup.config, directory: setup.directory, host: .childProcess)
        #expect(try setup.post(gateway, messageId: "3001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test")).status == 200)
        // Google has the request (and is slow to answer it) when the gateway dies.
        #expect(setup.fake.waitFor { $0.contains { $0["endpoint"]?.stringValue == "delayed" } })
        gateway.process.send(SIGKILL)
        _ = gateway.process.waitForExit(timeout: 20)
        #expect(Self.events(gateway).isEmpty)

        gateway = try Gateway(config: setup.config, directory: setup.directory, host: .childProcess)
        #expect(gateway.waitForFileQueue("data/queues/all", timeout: 30) { $0.count >= 1 })
        let event = try #require(Self.events(gateway)["3001"])
        #expect(event["environment"]?.stringValue == "sandbox" && event["subscription"]?["testPurchase"] != nil)
        // A redelivery after the restart is a duplicate of the stored event.
        #expect(try setup.post(gateway, messageId: "3001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test")).status == 200)
        #expect(gateway.process.waitForLog {
            $0["message"]?.stringValue == "duplicate notification" && $0["event.id"]?.stringValue == "3001"
        } != nil)
        #expect(gateway.fileQueueLines("data/queues/all").count == 1)
    }

    /// An inbox file that is not one refuses the start and is left as it was: starting without
    /// it would forget pushes Google was told were stored.
    @Test func anInboxItCannotReadRefusesTheStart() throws {
        let setup = try Setup()
        let inbox = setup.directory.appendingPathComponent("data/play-enrichment")
        try FileManager.default.createDirectory(at: inbox, withIntermediateDirectories: true)
        let garbage = Data("certainly not an inbox".utf8)
        try garbage.write(to: inbox.appendingPathComponent("inbox.log"))
        let refused = try GatewayProcess(config: setup.config, directory: setup.directory)
        let status = refused.waitForExit(timeout: 20)
        #expect(status != nil && status != 0)
        let log = refused.logLines.joined(separator: "\n")
        #expect(log.contains("play enrichment inbox") && log.contains("inbox.log"), "\(log)")
        #expect(try Data(contentsOf: inbox.appendingPathComponent("inbox.log")) == garbage)
    }

    /// A service-account file that cannot be used refuses the start, and a reload keeps the
    /// configuration in force, as a bad Apple `api-key` does: running on without enrichment
    /// would route a test purchase's event as production.
    @Test func anUnusableServiceAccountRefusesTheStartAndTheReload() throws {
        let setup = try Setup()
        let broken = setup.directory.appendingPathComponent("broken-sa.json")
        try "{\"type\": \"service_account\"}".write(to: broken, atomically: true, encoding: .utf8)
        let refusing = setup.config.replacingOccurrences(of: setup.fake.serviceAccountFile, with: broken.path)
        let refused = try GatewayProcess(config: refusing, directory: setup.directory)
        let status = refused.waitForExit(timeout: 20)
        #expect(status != nil && status != 0)
        let log = refused.logLines.joined(separator: "\n")
        #expect(log.contains("play \(PlayPushSigner.package)") && log.contains(broken.path), "\(log)")

        let gateway = try Gateway(config: setup.config(enriching: false), directory: setup.directory, host: .childProcess)
        try refusing.write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "reload rejected; the previous configuration stays" } != nil)
        #expect(try setup.post(gateway, messageId: "5001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test")).status == 200)
        #expect(gateway.waitForFileQueue("data/queues/all") { $0.count >= 1 })
        #expect(Self.events(gateway)["5001"]?["environment"]?.stringValue == "production")
        #expect(setup.fake.requests.isEmpty, "the rejected reload gave no app a service account")
    }

    /// A reload that gives the app a service account enriches the events from then on.
    @Test func aReloadTurnsEnrichmentOn() throws {
        let setup = try Setup()
        let gateway = try Gateway(config: setup.config(enriching: false), directory: setup.directory)
        #expect(try setup.post(gateway, messageId: "4001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test")).status == 200)
        #expect(gateway.waitForFileQueue("data/queues/all") { $0.count >= 1 })
        #expect(Self.events(gateway)["4001"]?["environment"]?.stringValue == "production")
        #expect(setup.fake.requests.isEmpty, "no service account, no question to Google")

        try setup.config(enriching: true).write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        #expect(try setup.post(gateway, messageId: "4002", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test")).status == 200)
        #expect(gateway.waitForFileQueue("data/queues/all") { $0.count >= 2 })
        let enriched = try #require(Self.events(gateway)["4002"])
        #expect(enriched["environment"]?.stringValue == "sandbox" && enriched["subscription"]?["testPurchase"] != nil)
    }
}
