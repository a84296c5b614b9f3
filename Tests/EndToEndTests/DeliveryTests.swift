import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// Fan-out end to end: the real gateway delivering to a recording Python sink.
@Suite("Delivery end to end", .serialized)
struct DeliveryEndToEndTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    private func gateway(_ body: String, directory: URL? = nil, listen: String = "127.0.0.1:0",
                         host: Gateway.Host = .inProcess) throws -> Gateway {
        let directory = try directory ?? TestPaths.makeTemporaryDirectory("storerelay-delivery")
        try signer.authority.rootPEM.write(to: directory.appendingPathComponent("test-root.pem"), atomically: true, encoding: .utf8)
        return try Gateway(config: Gateway.bareConfig("trust-root ./test-root.pem\n" + body, listen: listen), directory: directory, host: host)
    }

    @Test func signedWebhooksInEveryFormat() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("normalized", sink.url("/ok"), options: "header X-Team billing"))
            \(webhookDestination("apple", sink.url("/ok?format=apple"), options: "format apple"))
            \(webhookDestination("raw", sink.url("/ok?raw=1"), options: "include-raw yes"))
            route * * * -> normalized, apple, raw
            """)
        let uuid = UUID().uuidString.lowercased()
        let body = try signer.body(uuid: uuid, type: "SUBSCRIBED", subtype: "INITIAL_BUY")
        #expect(try gateway.post(json: body).json?["status"]?.stringValue == "accepted")
        #expect(sink.waitFor { $0.count == 3 })
        let started = Date().timeIntervalSince1970

        let normalized = try #require(sink.requests(path: "/ok").first)
        #expect(normalized["signatureValid"] == true)
        #expect(normalized["headers"]?["webhook-id"]?.stringValue == uuid)
        let timestamp = try #require(normalized["headers"]?["webhook-timestamp"]?.stringValue.flatMap(Double.init))
        #expect(abs(timestamp - started) < 60)
        #expect(normalized["headers"]?["webhook-signature"]?.stringValue?.hasPrefix("v1,") == true)
        #expect(normalized["headers"]?["user-agent"]?.stringValue?.hasPrefix("StoreRelay/") == true)
        #expect(normalized["headers"]?["content-type"]?.stringValue == "application/json")
        #expect(normalized["headers"]?["storerelay-attempt"]?.stringValue == "1")
        #expect(normalized["headers"]?["storerelay-environment"]?.stringValue == "sandbox")
        #expect(normalized["headers"]?["storerelay-type"]?.stringValue == "SUBSCRIBED")
        #expect(normalized["headers"]?["x-team"]?.stringValue == "billing")
        let event = try JSONValue.parse(try #require(normalized["body"]?.stringValue))
        #expect(event["id"]?.stringValue == uuid)
        #expect(event["subtype"]?.stringValue == "INITIAL_BUY")
        #expect(event["raw"] == .null)

        let apple = try #require(sink.requests(path: "/ok?format=apple").first)
        #expect(apple["body"]?.stringValue == body)
        #expect(apple["signatureValid"] == true)

        let raw = try #require(sink.requests(path: "/ok?raw=1").first)
        #expect(try JSONValue.parse(try #require(raw["body"]?.stringValue))["raw"]?.stringValue == body)
        #expect(gateway.deadLetters.isEmpty)
    }

    @Test func retriesWithTheSameIdUntilTheDestinationRecovers() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("flaky", sink.url("/flaky/2")))
            \(webhookDestination("limited", sink.url("/ratelimit")))
            \(webhookDestination("dated", sink.url("/ratelimit-date")))
            route * * * -> flaky, limited, dated
            """)
        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(sink.waitFor { requests in
            requests.filter { $0["path"]?.stringValue == "/flaky/2" }.count == 3
                && requests.filter { $0["path"]?.stringValue == "/ratelimit" }.count == 2
                && requests.filter { $0["path"]?.stringValue == "/ratelimit-date" }.count == 2
        })
        let flaky = sink.requests(path: "/flaky/2")
        #expect(flaky.map { $0["headers"]?["webhook-id"]?.stringValue } == [uuid, uuid, uuid])
        #expect(flaky.map { $0["headers"]?["storerelay-attempt"]?.stringValue } == ["1", "2", "3"])
        // Retry-After in seconds, then as an HTTP-date, is honoured over the 50 ms backoff.
        let limited = sink.requests(path: "/ratelimit").compactMap { $0["at"]?.doubleValue }
        #expect(limited[1] - limited[0] >= 0.95)
        let dated = sink.requests(path: "/ratelimit-date").compactMap { $0["at"]?.doubleValue }
        #expect(dated[1] - dated[0] >= 0.9)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(gateway.deadLetters.isEmpty)
    }

    @Test func rejectedAndExhaustedDeliveriesBecomeDeadLetters() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let closedPort = freeLoopbackPort()
        let gateway = try self.gateway("""
            \(webhookDestination("bad", sink.url("/bad")))
            \(webhookDestination("refused", "http://127.0.0.1:\(closedPort)/hook", options: "max-attempts 3"))
            route * * * -> bad, refused
            """)
        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(gateway.waitForDeadLetters { $0.count == 2 })
        let letters = gateway.deadLetters
        let rejected = try #require(letters.first { $0["destination"]?.stringValue == "bad" })
        #expect(rejected["reason"]?.stringValue == "rejected")
        #expect(rejected["eventId"]?.stringValue == uuid)
        #expect(rejected["attempts"]?.arrayValue?.count == 1)
        #expect(rejected["attempts"]?.arrayValue?.first?["status"]?.int64Value == 400)
        #expect(rejected["event"]?["id"]?.stringValue == uuid)
        #expect(sink.requests(path: "/bad").count == 1)

        let exhausted = try #require(letters.first { $0["destination"]?.stringValue == "refused" })
        #expect(exhausted["reason"]?.stringValue == "exhausted")
        let attempts = try #require(exhausted["attempts"]?.arrayValue)
        #expect(attempts.count == 3)
        for attempt in attempts {
            #expect(attempt["status"] == .null)
            #expect(attempt["error"]?.stringValue?.contains("connect") == true)
            #expect(attempt["at"]?.stringValue?.hasSuffix("Z") == true)
            #expect(attempt["durationMs"]?.int64Value != nil)
        }
    }

    @Test func aHangingDestinationNeverDelaysAnother() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            \(webhookDestination("hang", sink.url("/hang"), options: "timeout 400ms\nmax-attempts 2"))
            \(webhookDestination("ok", sink.url("/ok")))
            route * * * -> hang, ok
            """)
        let started = Date()
        var ids: [String] = []
        for _ in 0..<5 {
            let uuid = UUID().uuidString.lowercased()
            ids.append(uuid)
            #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        }
        #expect(sink.waitFor(timeout: 10) { $0.filter { $0["path"]?.stringValue == "/ok" }.count == 5 })
        // All five reached the healthy destination while the hanging one was still timing out.
        #expect(Date().timeIntervalSince(started) < 3)
        #expect(gateway.waitForDeadLetters { letters in
            letters.filter { $0["destination"]?.stringValue == "hang" && $0["reason"]?.stringValue == "exhausted" }.count == 5
        })
        let hung = gateway.deadLetters.first { $0["destination"]?.stringValue == "hang" }
        #expect(hung?["attempts"]?.arrayValue?.first?["error"]?.stringValue?.contains("timeout") == true)
    }

    @Test func routingUnionUnroutedAndQuarantined() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            app com.acme.journal
            app com.acme.other
            \(webhookDestination("a", sink.url("/ok?a")))
            \(webhookDestination("b", sink.url("/ok?b")))
            \(webhookDestination("c", sink.url("/ok?c")))
            route sandbox    *                 DID_RENEW        -> a
            route *          com.acme.journal  *                -> a, b
            route production *                 *                -> c
            route sandbox    com.acme.journal  REFUND/*         -> c
            """)
        let renew = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: renew, type: "DID_RENEW")).status == 200)
        let unrouted = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: unrouted, type: "TEST", bundleId: "com.acme.other")).status == 200)
        let quarantined = UUID().uuidString.lowercased()
        let answer = try gateway.post(json: try signer.body(uuid: quarantined, bundleId: "com.unknown.app"))
        #expect(answer.json?["status"]?.stringValue == "quarantined")

        #expect(sink.waitFor { $0.count >= 2 })
        #expect(gateway.waitForDeadLetters { $0.count == 2 })
        Thread.sleep(forTimeInterval: 0.3)
        // Each destination once, though two routes named `a`; `c` matched no route.
        #expect(sink.requests.compactMap { $0["path"]?.stringValue }.sorted() == ["/ok?a", "/ok?b"])
        let letters = gateway.deadLetters
        let unroutedLetter = letters.first { $0["eventId"]?.stringValue == unrouted }
        #expect(unroutedLetter?["reason"]?.stringValue == "unrouted")
        #expect(unroutedLetter?["destination"] == .null)
        let quarantinedLetter = letters.first { $0["eventId"]?.stringValue == quarantined }
        #expect(quarantinedLetter?["reason"]?.stringValue == "quarantined")
        #expect(quarantinedLetter?["detail"]?.stringValue?.contains("com.unknown.app") == true)
    }

    @Test func retriesResumeAfterKillNineWithTheirAttemptCount() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let destination = webhookDestination("flaky", sink.url("/flaky/3"),
                                             options: "backoff 400ms 400ms\nmax-attempts 10")
        let first = try gateway("\(destination)\nroute * * * -> flaky", host: .childProcess)
        let uuid = UUID().uuidString.lowercased()
        #expect(try first.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(sink.waitFor { $0.count >= 2 })
        first.process.send(SIGKILL)
        _ = first.process.waitForExit()
        let before = sink.requests.count

        let second = try Gateway(config: try String(contentsOf: first.process.configPath, encoding: .utf8),
                                 directory: first.directory)
        #expect(sink.waitFor { $0.contains { $0["count"]?.int64Value == 4 } })
        let attempts = sink.requests.compactMap { $0["headers"]?["storerelay-attempt"]?.stringValue.flatMap(Int.init) }
        #expect(attempts.count >= 4)
        // Attempt numbers carry on after the restart instead of starting again at 1.
        #expect(attempts[before...].allSatisfy { $0 >= before })
        #expect(attempts == attempts.sorted())
        Thread.sleep(forTimeInterval: 0.5)
        #expect(second.deadLetters.isEmpty)
        #expect(sink.requests.count == attempts.count)
    }

    @Test func theEmbeddedDefaultDeliversIntoFileQueues() throws {
        var config = try String(contentsOf: TestPaths.packageRoot.appendingPathComponent("routes.conf"), encoding: .utf8)
        config = config.replacingOccurrences(of: "listen 0.0.0.0:8080", with: "listen 127.0.0.1:0")
            .replacingOccurrences(of: "admin  127.0.0.1:9090", with: "admin 127.0.0.1:0")
        #expect(config.contains("admin 127.0.0.1:0"))
        // The test CA stands in for Apple's: the rest of the file is as shipped.
        config += "\ntrust-root ./test-root.pem\n"
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-default")
        let gateway = try Gateway(config: config, directory: directory)
        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        let deadline = Date().addingTimeInterval(10)
        while gateway.fileQueueLines("data/queues/sandbox").isEmpty && Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        let lines = gateway.fileQueueLines("data/queues/sandbox")
        #expect(lines.count == 1)
        #expect(try JSONValue.parse(try #require(lines.first))["id"]?.stringValue == uuid)
        #expect(gateway.fileQueueLines("data/queues/production").isEmpty)
    }
}

/// HTTPS downstreams: the system store plus `ca-file`, SNI and hostname checks.
@Suite("HTTPS delivery end to end", .serialized)
struct HTTPSDeliveryTests {
    @Test func onlyAVerifiedCertificateForTheRightHostIsAccepted() throws {
        let certificates = try TLSTestCertificates.shared()
        let signer = try NotificationSigner(authority: TestCertificateAuthority())
        let good = try WebhookSink(secret: testSigningSecret, certificate: certificates.localhost.certificateFile,
                                   key: certificates.localhost.privateKeyFile)
        let wrongHost = try WebhookSink(certificate: certificates.otherHost.certificateFile,
                                        key: certificates.otherHost.privateKeyFile)
        let unknownCA = try WebhookSink(certificate: certificates.untrusted.certificateFile,
                                        key: certificates.untrusted.privateKeyFile)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-https")
        let trust = "ca-file \(certificates.caFile)\nmax-attempts 2"
        let gateway = try Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            \(webhookDestination("good", good.url("/ok", host: "localhost"), options: trust))
            \(webhookDestination("wronghost", wrongHost.url("/ok", host: "localhost"), options: trust))
            \(webhookDestination("unknownca", unknownCA.url("/ok", host: "localhost"), options: trust))
            \(webhookDestination("nocafile", good.url("/ok?nocafile", host: "localhost"), options: "max-attempts 2"))
            route * * * -> good, wronghost, unknownca, nocafile
            """), directory: directory)
        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(good.waitFor { $0.count == 1 })
        #expect(good.requests.first?["signatureValid"] == true)
        #expect(gateway.waitForDeadLetters { $0.count == 3 })
        for name in ["wronghost", "unknownca", "nocafile"] {
            let letter = gateway.deadLetters.first { $0["destination"]?.stringValue == name }
            #expect(letter?["reason"]?.stringValue == "exhausted", "\(name)")
            #expect(letter?["attempts"]?.arrayValue?.first?["error"]?.stringValue?.contains("tls") == true, "\(name)")
        }
        // A certificate that failed verification never received the event.
        #expect(wrongHost.requests.isEmpty && unknownCA.requests.isEmpty)
        #expect(good.requests.count == 1)
    }
}
