import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// Shutdown, and a journal that cannot write.
@Suite("Lifecycle end to end", .serialized)
struct LifecycleTests {
    @Test(arguments: [SIGTERM, SIGINT])
    func signalStopsGracefullyWithExitZero(_ signal: Int32) throws {
        let gateway = try Gateway()
        #expect(try Curl.get(gateway.baseURL + "/healthz").status == 200)
        gateway.process.send(signal)
        #expect(gateway.process.waitForExit() == 0)
        #expect(gateway.process.logRecords.contains { $0["message"]?.stringValue == "stopped" })
    }

    /// The graceful drain: at SIGTERM `/readyz` answers 503 at once (here to a request that
    /// was arriving), deliveries in flight are let finish within `shutdown-grace` and their
    /// outcomes recorded (one delivered, one rejected into a dead letter), so a restart sends
    /// neither again, and the process exits 0.
    @Test func sigtermDrainsDeliveriesInFlightWithinTheGrace() throws {
        let signer = try NotificationSigner(authority: TestCertificateAuthority())
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-drain")
        let config = Gateway.bareConfig("""
            trust-root ./test-root.pem
            shutdown-grace 20s
            \(webhookDestination("slow", sink.url("/slow/3000"), options: "timeout 10s"))
            \(webhookDestination("refusing", sink.url("/slow/3000/400"), options: "timeout 10s"))
            route * * * -> slow, refusing
            """)
        let gateway = try Gateway(config: config, directory: directory)
        // A readiness probe on a connection the server has surely accepted and served once.
        let probe = try RawHTTPClient(port: gateway.port, timeout: 20)
        try probe.send(RawHTTPClient.request("GET", "/healthz"))
        #expect(try probe.readResponse().status == 200)

        let id = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: id)).json?["status"]?.stringValue == "accepted")
        #expect(sink.waitFor { $0.count == 2 })  // both deliveries are under way
        try probe.send("GET /readyz HTTP/1.1\r\nHost: a\r\n")  // half a request, arriving
        Thread.sleep(forTimeInterval: 0.5)
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "stopping" } != nil)
        try probe.send("\r\n")
        let readiness = try probe.readResponse()
        #expect(readiness.status == 503)
        #expect(readiness.bodyText.contains("stopping"))
        #expect(gateway.process.waitForExit(timeout: 30) == 0)
        // It waited for the sink's answers: the process ended after both were given.
        #expect(gateway.process.logRecords.contains { $0["message"]?.stringValue == "dead-lettered" })
        #expect(gateway.deadLetters.count == 1)

        // Both outcomes were recorded: after a restart nothing is sent again.
        let restarted = try Gateway(config: config, directory: directory)
        #expect(restarted.process.waitForLog { $0["message"]?.stringValue == "deliveries resumed" }?["unfinished"]?.int64Value == 0)
        Thread.sleep(forTimeInterval: 1)
        #expect(sink.requests.filter { $0["headers"]?["webhook-id"]?.stringValue == id }.count == 2)
    }

    /// With no grace, a delivery in flight is abandoned at once and resumes after a restart.
    @Test func withoutGraceADeliveryInFlightResumesAfterTheRestart() throws {
        let signer = try NotificationSigner(authority: TestCertificateAuthority())
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-drain-none")
        let config = Gateway.bareConfig("""
            trust-root ./test-root.pem
            shutdown-grace 0s
            \(webhookDestination("slow", sink.url("/slow/1500"), options: "timeout 5s"))
            route * * * -> slow
            """)
        let gateway = try Gateway(config: config, directory: directory)
        let id = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: id)).json?["status"]?.stringValue == "accepted")
        #expect(sink.waitFor { $0.count == 1 })
        let signalled = Date()
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
        #expect(Date().timeIntervalSince(signalled) < 1.4, "the gateway waited with shutdown-grace 0s")
        let restarted = try Gateway(config: config, directory: directory)
        #expect(sink.waitFor { $0.filter { $0["headers"]?["webhook-id"]?.stringValue == id }.count == 2 })
        _ = restarted
    }

    /// A second `serve` on a data directory in use refuses to start, naming the cause, and
    /// the first keeps accepting; once the first has stopped, the second starts.
    @Test func aSecondGatewayOnTheSameDataDirectoryRefusesToStart() throws {
        let first = try Gateway()
        let secondDirectory = try TestPaths.makeTemporaryDirectory("storerelay-e2e")
        let sharedData = "data " + first.directory.appendingPathComponent("data").path
        let config = Gateway.config().replacingOccurrences(of: "data ./data", with: sharedData)
        try #require(config.contains(sharedData), "the test config must name its data directory")
        let second = try GatewayProcess(config: config, directory: secondDirectory)
        let failure = second.waitForLog { $0["message"]?.stringValue == "cannot start" }
        #expect(second.waitForExit() == 1)
        #expect(failure?["error"]?.stringValue?.contains("open in another process") == true, "\(second.logLines)")
        #expect(try Curl.get(first.baseURL + "/readyz").status == 200)

        first.process.send(SIGTERM)
        #expect(first.process.waitForExit() == 0)
        let third = try GatewayProcess(config: config, directory: secondDirectory)
        #expect(throws: Never.self) { try third.waitForPort() }
    }

    /// A file-size limit makes every journal write past it fail with EFBIG, as a full disk
    /// would: the gateway answers 503, readiness fails, and nothing answered 200 is missing.
    @Test func fullJournalAnswers503AndAcknowledgesNothingItDidNotStore() throws {
        let bodies = try (0..<40).map { _ in try testSigner.body(uuid: UUID().uuidString.lowercased()) }
        // dash counts `ulimit -f` in 512-byte blocks: 48 KiB holds a few notifications only.
        let gateway = try Gateway(config: Gateway.trustingConfig(), directory: Gateway.trustingDirectory(),
                                  shellPrefix: "ulimit -f 96;")
        var acknowledged: [String] = []
        var unavailable = 0
        for body in bodies {
            let response = try gateway.post(json: body)
            if response.status == 200, let id = response.json?["id"]?.stringValue {
                acknowledged.append(id)
            } else {
                #expect(response.status == 503, "\(response.body)")
                #expect(response.json?["error"]?.stringValue == "unavailable")
                unavailable += 1
            }
        }
        #expect(!acknowledged.isEmpty)
        #expect(unavailable > 0)
        #expect(try Curl.get(gateway.baseURL + "/readyz").status == 503)
        #expect(try Curl.get(gateway.baseURL + "/healthz").status == 200)
        gateway.process.send(SIGKILL)
        _ = gateway.process.waitForExit()

        // Without the limit, everything acknowledged is there and the rest is accepted now.
        let restarted = try Gateway(config: Gateway.trustingConfig(), directory: gateway.directory)
        for id in acknowledged { #expect(restarted.journalContains(id), "\(id) lost") }
        #expect(try Curl.get(restarted.baseURL + "/readyz").status == 200)
        for body in bodies {
            let response = try restarted.post(json: body)
            #expect(response.status == 200)
        }
    }
}
