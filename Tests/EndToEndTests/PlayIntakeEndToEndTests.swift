import Foundation
import Testing
import StoreRelayCore
import StoreRelayCrypto
import StoreRelayTestSupport

/// Google Play pushes through a real gateway (issue 32, points 1 and 2): Google's keys served
/// over HTTPS by the test, pushes posted over HTTP with their bearer tokens, events delivered
/// to a real webhook sink; hostile tokens refused with nothing stored; redeliveries, unknown
/// keys, undeclared packages, every notification type, `format apple` and `kill -9`.
@Suite("Google Play push intake end to end", .serialized)
struct PlayIntakeEndToEndTests {
    static let path = "/play/notifications"
    let signer: PlayPushSigner
    let keys: PlayKeySetServer

    init() throws {
        signer = try PlayPushSigner(kids: ["key-1", "key-2", "rogue"])
        keys = try PlayKeySetServer(document: try signer.keySetDocument(["key-1"]))
    }

    func config(hook: String, raw: String? = nil, hookOptions: String = "") -> String {
        Gateway.bareConfig("""
            path \(Self.path) play
            play com.acme.journal {
                push-audience \(PlayPushSigner.audience)
                push-account \(PlayPushSigner.account)
            }
            \(keys.configLine)
            \(webhookDestination("hook", hook, options: hookOptions))
            \(raw.map { webhookDestination("raw", $0, options: "format apple") } ?? "")
            route * com.acme.journal * -> hook\(raw == nil ? "" : ", raw")
            """)
    }

    /// Starts a gateway and waits until it holds Google's keys.
    func start(_ config: String, directory: URL? = nil, host: Gateway.Host = .inProcess) throws -> Gateway {
        let gateway = try Gateway(config: config, directory: directory, host: host)
        let fetched = gateway.process.waitForLog { $0["message"]?.stringValue == "google keys fetched" }
        try #require(fetched != nil, "the gateway never fetched the keys:\n\(gateway.process.logLines.joined(separator: "\n"))")
        return gateway
    }

    func post(_ gateway: Gateway, _ body: String, token: String?) throws -> CurlResponse {
        try Curl.post(gateway.baseURL + Self.path, json: body, headers: token.map { ["Authorization: Bearer \($0)"] } ?? [])
    }

    func renewal(_ id: String) -> String {
        PlayPushSigner.body(messageId: id, data: PlayPushSigner.subscriptionNotification(type: 2))
    }

    @Test func validPushesAreDeliveredOnceWithTheirOriginalBodyForFormatApple() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try start(config(hook: sink.url("/play"), raw: sink.url("/raw")))
        let body = renewal("1001")
        let first = try post(gateway, body, token: try signer.validToken())
        #expect(first.status == 200, "\(first.body)")
        #expect(first.json?["status"] == "accepted")
        #expect(first.json?["id"] == "1001")
        // Pub/Sub redelivers: the second one is a duplicate, answered 200, stored once.
        let again = try post(gateway, body, token: try signer.validToken())
        #expect(again.status == 200)
        #expect(again.json?["status"] == "duplicate")

        #expect(sink.waitFor { $0.count >= 2 }, "not delivered: \(sink.requests)")
        let hooked = sink.requests(path: "/play")
        #expect(hooked.count == 1)
        let event = try #require(try hooked.first?["body"]?.stringValue.map { try JSONValue.parse($0) })
        #expect(event["source"] == "googleplay")
        #expect(event["type"] == "SUBSCRIPTION_RENEWED")
        #expect(event["id"] == "1001")
        #expect(event["app"]?["bundleId"] == "com.acme.journal")
        #expect(event["transaction"]?["purchaseToken"] == "purchase-token-1")
        #expect(event["environment"] == "production")
        #expect(hooked.first?["signatureValid"] == true)
        #expect(hooked.first?["headers"]?["webhook-id"] == "1001")
        #expect(hooked.first?["headers"]?["storerelay-type"] == "SUBSCRIPTION_RENEWED")
        // format apple: the push body byte for byte.
        let raw = sink.requests(path: "/raw")
        #expect(raw.count == 1)
        #expect(raw.first?["body"]?.stringValue == body)
        usleep(300_000)
        #expect(sink.requests(path: "/play").count == 1, "a duplicate was fanned out again")

        // The event log finds it by its purchase token, the metrics count it, the page shows it.
        let admin = try AdminGateway(gateway)
        var found: [JSONValue] = []
        #expect(pollUntil(timeout: 10) {
            found = (try? admin.get("/api/events?q=purchase-token-1"))?.json?["items"]?.arrayValue ?? []
            return !found.isEmpty
        })
        #expect(found.count == 1)
        #expect(found.first?["id"] == "1001")
        #expect(found.first?["type"] == "SUBSCRIPTION_RENEWED")
        #expect(found.first?["bundleId"] == "com.acme.journal")
        let metrics = try admin.metrics
        #expect(metrics.contains(#"app="com.acme.journal",environment="production",version="play",outcome="accepted"} 1"#), "\(metrics)")
        #expect(metrics.contains(#"app="com.acme.journal",environment="production",version="play",outcome="duplicate"} 1"#))
        let page = try admin.get("/")
        #expect(page.status == 200)
        #expect(page.body.contains("com.acme.journal"))
    }

    @Test func aPushStartsATraceItsDeliveryContinues() throws {
        let collector = try OTLPCollector()
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try start(config(hook: sink.url("/play")) + "\ntracing otlp \(collector.url)\n")
        #expect(try post(gateway, renewal("8001"), token: try signer.validToken()).json?["status"] == "accepted")
        #expect(sink.waitFor { $0.count == 1 })
        #expect(pollUntil(timeout: 20) { collector.spans.count >= 4 })
        let spans = collector.spans
        let receive = try #require(spans.first { $0["name"] == "receive" })
        let receiveId = try #require(receive["spanId"]?.stringValue)
        let id = receive["attributes"]?.arrayValue?.first { $0["key"] == "storerelay.event.id" }?["value"]?["stringValue"]
        #expect(id == "8001")
        for name in ["verify", "journal", "deliver hook"] {
            #expect(spans.first { $0["name"]?.stringValue == name }?["parentSpanId"]?.stringValue == receiveId, "\(name)")
        }
        let traceparent = sink.requests.first?["headers"]?["traceparent"]?.stringValue
        #expect(traceparent?.split(separator: "-").dropFirst().first.map(String.init) == receive["traceId"]?.stringValue)
    }

    /// Cluster mode: two instances share one server; Pub/Sub's redelivery to the other
    /// instance is a duplicate there too, and the event goes out once.
    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    func redeliveryToAnotherInstanceIsADuplicate() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        func instance(_ name: String) throws -> Gateway {
            try start(config(hook: sink.url("/play")) + """

                cluster redis://127.0.0.1:\(server.port) {
                    instance-id \(name)
                }
                """)
        }
        let a = try instance("a"), b = try instance("b")
        let body = renewal("9001")
        #expect(try post(a, body, token: try signer.validToken()).json?["status"] == "accepted")
        #expect(try post(b, body, token: try signer.validToken()).json?["status"] == "duplicate")
        #expect(sink.waitFor { !$0.isEmpty })
        usleep(500_000)
        #expect(sink.requests.count == 1)
        let event = try #require(try sink.requests.first?["body"]?.stringValue.map { try JSONValue.parse($0) })
        #expect(event["source"] == "googleplay" && event["id"] == "9001")
    }

    @Test func aReloadChangesWhosePushesAreAccepted() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try start(config(hook: sink.url("/play")))
        let moved = config(hook: sink.url("/play")).replacingOccurrences(of: PlayPushSigner.audience, with: "https://relay.example.test/moved")
        try moved.write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        let now = Timestamp.now().seconds
        let old = try post(gateway, renewal("6001"), token: try signer.validToken())
        #expect(old.status == 401, "\(old.body)")
        let new = try post(gateway, renewal("6002"), token: try signer.token(claims: PlayPushSigner.claims(now: now, audience: "https://relay.example.test/moved")))
        #expect(new.json?["status"] == "accepted", "\(new.body)")
        // The key set was kept: the certs URL did not change.
        #expect(keys.fetchCount == 1)
    }

    @Test func hostileTokensAreRefusedAndNothingIsStored() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try start(config(hook: sink.url("/play")))
        let now = Timestamp.now().seconds
        func claims(_ change: (inout [(String, JSONValue)]) -> Void) -> [(String, JSONValue)] {
            var claims = PlayPushSigner.claims(now: now)
            change(&claims)
            return claims
        }
        let valid = try signer.validToken()
        let parts = valid.split(separator: ".").map(String.init)
        let (n, _) = try signer.keys["key-1"]!.publicKey().components()
        let hsInput = Base64.urlEncode(Array(#"{"alg":"HS256","kid":"key-1"}"#.utf8)) + "." + parts[1]
        let hostile: [(String, String?)] = [
            ("missing header", nil),
            ("alg none", Base64.urlEncode(Array(#"{"alg":"none","kid":"key-1"}"#.utf8)) + "." + parts[1] + "."),
            ("HS256 keyed with the public key", hsInput + "." + Base64.urlEncode(HMACSHA256.authenticationCode(for: Array(hsInput.utf8), key: n))),
            ("kid naming another key", try signer.token(kid: "key-1", claims: PlayPushSigner.claims(now: now), signWith: "rogue")),
            ("expired", try signer.token(claims: claims { $0[4] = ("exp", .integer(now - 600)) })),
            ("issued in the future", try signer.token(claims: claims { $0[5] = ("iat", .integer(now + 3600)) })),
            ("wrong audience", try signer.token(claims: claims { $0[0] = ("aud", "https://elsewhere.example/play") })),
            ("wrong issuer", try signer.token(claims: claims { $0[6] = ("iss", "https://evil.example") })),
            ("wrong account", try signer.token(claims: claims { $0[2] = ("email", "attacker@evil.iam.gserviceaccount.com") })),
            ("email not verified", try signer.token(claims: claims { $0[3] = ("email_verified", false) })),
            ("email_verified missing", try signer.token(claims: claims { $0.remove(at: 3) })),
            ("huge", try signer.token(claims: claims { $0.append(("pad", .string(String(repeating: "x", count: 7000)))) })),
            ("malformed base64", "%%%." + parts[1] + "." + parts[2]),
            ("malformed JSON", Base64.urlEncode(Array("{".utf8)) + "." + parts[1] + "." + parts[2]),
            ("tampered claims", parts[0] + "." + Base64.urlEncode(Array(#"{"aud":"x"}"#.utf8)) + "." + parts[2]),
        ]
        for (index, (name, token)) in hostile.enumerated() {
            let id = "hostile-\(index)"
            let answer = try post(gateway, renewal(id), token: token)
            #expect(answer.status == 401, "\(name): \(answer.status) \(answer.body)")
            #expect(answer.json?["error"] == "signature", "\(name)")
            #expect(!gateway.journalContains(id), "\(name) was stored")
        }
        // Two credentials, one of them valid.
        let twice = try Curl.post(gateway.baseURL + Self.path, json: renewal("hostile-twice"),
                                  headers: ["Authorization: Bearer \(valid)", "Authorization: Bearer \(parts[0]).x.y"])
        #expect(twice.status == 401, "\(twice.body)")
        #expect(!gateway.journalContains("hostile-twice"))
        // Not the Bearer scheme.
        let basic = try Curl.post(gateway.baseURL + Self.path, json: renewal("hostile-basic"), headers: ["Authorization: Basic \(valid)"])
        #expect(basic.status == 401)
        #expect(!gateway.journalContains("hostile-basic"))
        // Apple's path does not take Play pushes, nor Play's path Apple's bodies.
        let onApple = try Curl.post(gateway.notificationURL, json: renewal("hostile-apple"), headers: ["Authorization: Bearer \(valid)"])
        #expect(onApple.status == 400)
        let admin = try AdminGateway(gateway)
        let events = try admin.get("/api/events?limit=100")
        #expect(events.json?["items"]?.arrayValue?.isEmpty == true, "\(events.body)")
        // And a valid push still goes through.
        #expect(try post(gateway, renewal("after-hostile"), token: valid).json?["status"] == "accepted")
        #expect(sink.waitFor { $0.count == 1 })
    }

    @Test func anUnknownKidAnswers503UntilTheRefreshedKeysHoldIt() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try start(config(hook: sink.url("/play")))
        let fetchesBefore = keys.fetchCount
        // Google rotates to key-2; the gateway's keys do not hold it yet.
        keys.set { $0.document = try! signer.keySetDocument(["key-1", "key-2"]) }
        let rotated = try signer.validToken(kid: "key-2")
        let first = try post(gateway, renewal("2001"), token: rotated)
        #expect(first.status == 503, "\(first.body)")
        #expect(first.json?["error"] == "unavailable")
        #expect(!gateway.journalContains("2001"))
        // Pub/Sub retries; the one refresh the first push asked for brings key-2.
        var answer = first
        #expect(pollUntil(timeout: 10, interval: 0.1) {
            answer = (try? post(gateway, renewal("2001"), token: rotated)) ?? answer
            return answer.status == 200
        }, "still \(answer.status) \(answer.body)")
        #expect(answer.json?["status"] == "accepted")
        // A flood of made-up kids triggers no more fetches than the one allowed.
        for index in 0..<20 {
            let bogus = try signer.token(kid: "bogus-\(index)", claims: PlayPushSigner.claims(now: Timestamp.now().seconds), signWith: "rogue")
            #expect(try post(gateway, renewal("bogus-\(index)"), token: bogus).status == 503)
        }
        usleep(300_000)
        #expect(keys.fetchCount == fetchesBefore + 1, "fetched \(keys.fetchCount - fetchesBefore) times")
        #expect(sink.waitFor { $0.count == 1 })
    }

    @Test func untilTheFirstFetchSucceedsPushesAnswer503() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        keys.set { $0.status = 500 }
        let gateway = try Gateway(config: config(hook: sink.url("/play")))
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "google keys fetch failed" } != nil)
        let token = try signer.validToken()
        let early = try post(gateway, renewal("1101"), token: token)
        #expect(early.status == 503, "\(early.body)")
        #expect(early.json?["error"] == "unavailable")
        #expect(!gateway.journalContains("1101"))
        // Google answers again: the retries (1 s, 2 s, ...) bring the keys without a restart.
        keys.set { $0.status = 200 }
        var answer = early
        #expect(pollUntil(timeout: 15, interval: 0.2) {
            answer = (try? post(gateway, renewal("1101"), token: token)) ?? answer
            return answer.status == 200
        }, "still \(answer.status) \(answer.body)")
        #expect(answer.json?["status"] == "accepted")
    }

    @Test func undeclaredPackagesAndUnreadableBodiesAreQuarantined() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try start(config(hook: sink.url("/play")))
        let token = try signer.validToken()
        let other = PlayPushSigner.body(messageId: "3001", data: PlayPushSigner.subscriptionNotification(type: 4, package: "com.other.app"))
        let notNotification = PlayPushSigner.body(messageId: "3002", data: #"{"hello":"world"}"#)
        for (body, id) in [(other, "3001"), (notNotification, "3002"), (#"{"not":"a push"}"#, nil)] {
            let answer = try post(gateway, body, token: token)
            #expect(answer.status == 200, "\(answer.body)")
            #expect(answer.json?["status"] == "quarantined")
            if let id { #expect(answer.json?["id"]?.stringValue == id) }
        }
        let admin = try AdminGateway(gateway)
        #expect(pollUntil(timeout: 10) {
            (try? admin.get("/api/dead-letters?reason=quarantined"))?.json?["items"]?.arrayValue?.count == 3
        })
        let letters = try admin.get("/api/dead-letters?reason=quarantined").json?["items"]?.arrayValue ?? []
        #expect(letters.contains { $0["eventId"] == "3001" && $0["event"]?["app"]?["bundleId"] == "com.other.app" })
        // Unauthenticated, the same bodies are refused, not quarantined.
        #expect(try post(gateway, other.replacingOccurrences(of: "3001", with: "3009"), token: nil).status == 401)
        usleep(300_000)
        #expect(sink.requests.isEmpty)
    }

    @Test func everyNotificationTypeIsDeliveredByItsName() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try start(config(hook: sink.url("/play")))
        let token = try signer.validToken()
        var expected: [String: String] = [:]
        let names = [1: "SUBSCRIPTION_RECOVERED", 2: "SUBSCRIPTION_RENEWED", 3: "SUBSCRIPTION_CANCELED", 4: "SUBSCRIPTION_PURCHASED",
                     5: "SUBSCRIPTION_ON_HOLD", 6: "SUBSCRIPTION_IN_GRACE_PERIOD", 7: "SUBSCRIPTION_RESTARTED",
                     8: "SUBSCRIPTION_PRICE_CHANGE_CONFIRMED", 9: "SUBSCRIPTION_DEFERRED", 10: "SUBSCRIPTION_PAUSED",
                     11: "SUBSCRIPTION_PAUSE_SCHEDULE_CHANGED", 12: "SUBSCRIPTION_REVOKED", 13: "SUBSCRIPTION_EXPIRED",
                     17: "SUBSCRIPTION_ITEMS_CHANGED", 18: "SUBSCRIPTION_CANCELLATION_SCHEDULED", 19: "SUBSCRIPTION_PRICE_CHANGE_UPDATED",
                     20: "SUBSCRIPTION_PENDING_PURCHASE_CANCELED", 99: "SUBSCRIPTION_NOTIFICATION_99"]
        for (type, name) in names {
            let id = "40\(type)"
            expected[id] = name
            #expect(try post(gateway, PlayPushSigner.body(messageId: id, data: PlayPushSigner.subscriptionNotification(type: type)), token: token).status == 200)
        }
        let others = [("4501", PlayPushSigner.oneTimeProductNotification(type: 1), "ONE_TIME_PRODUCT_PURCHASED"),
                      ("4502", PlayPushSigner.oneTimeProductNotification(type: 2), "ONE_TIME_PRODUCT_CANCELED"),
                      ("4503", PlayPushSigner.voidedPurchaseNotification(), "VOIDED_PURCHASE"),
                      ("4504", PlayPushSigner.testNotification(), "TEST")]
        for (id, data, name) in others {
            expected[id] = name
            #expect(try post(gateway, PlayPushSigner.body(messageId: id, data: data), token: token).status == 200)
        }
        #expect(sink.waitFor { $0.count >= expected.count }, "\(sink.requests.count) of \(expected.count) delivered")
        var delivered: [String: String] = [:]
        for request in sink.requests {
            guard let text = request["body"]?.stringValue, let event = try? JSONValue.parse(text),
                  let id = event["id"]?.stringValue, let type = event["type"]?.stringValue else { continue }
            delivered[id] = type
            #expect(event["source"] == "googleplay")
        }
        #expect(delivered == expected)
    }

    @Test func aJournaledPushIsDeliveredAfterKillNine() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        // Attempts and their due times survive the restart: a slow retry with room for many
        // attempts keeps the event from ending as a dead letter however late the kill comes,
        // and the second life's attempt is due within a second.
        let patient = "backoff 1s 1s\nmax-attempts 60"
        // First life: the webhook is down, so the event waits in the journal.
        let down = "http://127.0.0.1:\(freeLoopbackPort())/play"
        let first = try start(config(hook: down, hookOptions: patient), host: .childProcess)
        let accepted = try post(first, renewal("5001"), token: try signer.validToken())
        #expect(accepted.json?["status"] == "accepted", "\(accepted.body)")
        first.process.send(SIGKILL)
        #expect(first.process.waitForExit() != nil)

        // Second life: the same journal, the webhook up; the event goes out, rebuilt from
        // the journal record, and the push is still a duplicate.
        let second = try start(config(hook: sink.url("/play"), hookOptions: patient), directory: first.directory)
        #expect(sink.waitFor { !$0.isEmpty }, "the journaled push was never delivered")
        let event = try #require(try sink.requests.first?["body"]?.stringValue.map { try JSONValue.parse($0) })
        #expect(event["id"] == "5001")
        #expect(event["source"] == "googleplay")
        #expect(event["type"] == "SUBSCRIPTION_RENEWED")
        #expect(try post(second, renewal("5001"), token: try signer.validToken()).json?["status"] == "duplicate")
    }
}
