import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// SIGHUP reloads routes.conf: validated first, applied to new events, unchanged destinations
/// kept, removed ones dead-letter what they hold.
@Suite("Reload end to end", .serialized)
struct ReloadTests {
    @Test func sighupAppliesValidConfigurationsAndRejectsInvalidOnes() throws {
        let signer = try NotificationSigner(authority: TestCertificateAuthority())
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-reload")
        let closedPort = freeLoopbackPort()
        func config(_ routes: String, extra: String = "") -> String {
            Gateway.bareConfig("""
                trust-root ./test-root.pem
                \(webhookDestination("a", sink.url("/ok?a")))
                \(webhookDestination("b", sink.url("/ok?b")))
                \(webhookDestination("slow", sink.url("/flaky/2"), options: "backoff 700ms 700ms"))
                \(extra)
                \(routes)
                """)
        }
        let gone = webhookDestination("gone", "http://127.0.0.1:\(closedPort)/x", options: "backoff 30s 30s\nmax-attempts 5")
        let gateway = try Gateway(config: config("route * * * -> a, slow, gone", extra: gone), directory: directory)
        let first = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: first)).status == 200)
        #expect(sink.waitFor { requests in requests.contains { $0["path"]?.stringValue == "/ok?a" } && requests.contains { $0["path"]?.stringValue == "/flaky/2" } })

        // Route to b instead; drop `gone`, which still holds the first event waiting for a retry.
        try config("route * * * -> b, slow").write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        let second = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: second)).status == 200)
        #expect(sink.waitFor { $0.contains { $0["path"]?.stringValue == "/ok?b" && $0["headers"]?["webhook-id"]?.stringValue == second } })
        #expect(!sink.requests.contains { $0["path"]?.stringValue == "/ok?a" && $0["headers"]?["webhook-id"]?.stringValue == second })
        // The unchanged destination kept its queue: the first event's retries carry on to success.
        #expect(sink.waitFor { requests in
            requests.filter { $0["path"]?.stringValue == "/flaky/2" && $0["headers"]?["webhook-id"]?.stringValue == first }.count == 3
        })
        // The removed destination dead-lettered what it held, as unrouted (a replay routes it again).
        #expect(gateway.waitForDeadLetters { letters in
            letters.contains { $0["destination"]?.stringValue == "gone" && $0["reason"]?.stringValue == "unrouted" }
        })

        // An invalid file is rejected with its position and the previous configuration stays.
        try (config("route * * * -> b, slow") + "\nretries 5\n").write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        let rejected = gateway.process.waitForLog { $0["message"]?.stringValue == "reload rejected; the previous configuration stays" }
        #expect(rejected?["errors"]?.stringValue?.contains("routes.conf:") == true)
        let third = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: third)).status == 200)
        #expect(sink.waitFor { $0.contains { $0["path"]?.stringValue == "/ok?b" && $0["headers"]?["webhook-id"]?.stringValue == third } })
    }

    /// A file queue added by a reload gets the directory a start would have made (0750, for
    /// its group of consumers), not the data directory's private mode.
    @Test func aReloadMakesQueueDirectoriesAsAStartDoes() throws {
        let gateway = try Gateway(config: Gateway.bareConfig("destination first file ./data/queues/first\nroute * * * -> first"))
        func mode(_ relative: String) -> Int? {
            (try? FileManager.default.attributesOfItem(atPath: gateway.directory.appendingPathComponent(relative).path))?[.posixPermissions] as? Int
        }
        #expect(mode("data/queues/first") == 0o750)
        let reloaded = Gateway.bareConfig("""
            destination first file ./data/queues/first
            destination second file ./data/queues/second
            route * * * -> first, second
            """)
        try reloaded.write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        #expect(mode("data/queues/second") == 0o750)
    }

    /// A reload the gateway itself refuses (a queue directory it cannot make) is reported
    /// through the reload's completion, and the previous configuration stays: the next
    /// valid reload still applies after it (reloads run one at a time).
    @Test func aReloadThatCannotOpenItsDestinationsLeavesThePreviousOne() throws {
        let gateway = try Gateway(config: Gateway.bareConfig("destination first file ./data/queues/first\nroute * * * -> first"))
        try Gateway.bareConfig("destination first file /proc/storerelay-cannot/first\nroute * * * -> first")
            .write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        let rejected = gateway.process.waitForLog { $0["message"]?.stringValue == "reload rejected; the previous configuration stays" }
        #expect(rejected?["errors"]?.stringValue?.contains("/proc/storerelay-cannot/first") == true, "\(String(describing: rejected))")
        #expect(!gateway.process.logRecords.contains { $0["message"]?.stringValue == "configuration reloaded" })

        try Gateway.bareConfig("destination second file ./data/queues/second\nroute * * * -> second")
            .write(to: gateway.process.configPath, atomically: true, encoding: .utf8)
        gateway.process.send(SIGHUP)
        #expect(gateway.process.waitForLog { $0["message"]?.stringValue == "configuration reloaded" } != nil)
        #expect(FileManager.default.fileExists(atPath: gateway.directory.appendingPathComponent("data/queues/second").path))
    }
}
