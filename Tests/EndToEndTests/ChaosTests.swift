import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// Several clients post hundreds of notifications while the gateway is killed with SIGKILL and
/// restarted; every notification answered 200 must reach every destination afterwards.
@Suite("Chaos", .serialized)
struct ChaosTests {
    @Test func everyAcknowledgedNotificationArrivesDespiteKillNine() throws {
        let signer = try NotificationSigner(authority: TestCertificateAuthority())
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-chaos")
        let port = freeLoopbackPort()
        let config = Gateway.bareConfig("""
            trust-root ./test-root.pem
            \(webhookDestination("hook", sink.url("/ok"), options: "concurrency 8\nmax-attempts 1000"))
            destination ledger file ./data/queues/ledger {
                rotate 16KiB 1h
                compress gzip
            }
            route * * * -> hook, ledger
            """, listen: "127.0.0.1:\(port)")

        let clients = 4, perClient = 60
        let bodies = try (0..<clients).map { _ in
            try (0..<perClient).map { _ -> (String, String) in
                let uuid = UUID().uuidString.lowercased()
                return (uuid, try signer.body(uuid: uuid))
            }
        }
        let gateway = Locked(try GatewayProcess(config: config, directory: directory))
        _ = try gateway.current.waitForPort()

        let acknowledged = Locked<Set<String>>([])
        let finished = DispatchGroup()
        for client in 0..<clients {
            DispatchQueue.global().async(group: finished) {
                for (uuid, body) in bodies[client] {
                    // Like Apple: retry until the gateway answers; only a 200 counts.
                    let deadline = Date().addingTimeInterval(60)
                    while Date() < deadline {
                        if let status = Self.post(body, port: port), status == 200 {
                            acknowledged.withLock { _ = $0.insert(uuid) }
                            break
                        }
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                }
            }
        }
        // Kill and restart three times while the clients are posting.
        for _ in 0..<3 {
            Thread.sleep(forTimeInterval: 0.4)
            gateway.current.send(SIGKILL)
            _ = gateway.current.waitForExit()
            let restarted = try GatewayProcess(config: config, directory: directory)
            _ = try restarted.waitForPort()
            gateway.withLock { $0 = restarted }
        }
        #expect(finished.wait(timeout: .now() + 120) == .success)
        let expected = acknowledged.current
        #expect(expected.count == clients * perClient)

        let harness = Gateway(process: gateway.current, port: port, directory: directory)
        let deadline = Date().addingTimeInterval(60)
        func missing() -> (hook: Set<String>, ledger: Set<String>) {
            let hooked = Set(sink.requests.compactMap { $0["headers"]?["webhook-id"]?.stringValue })
            let queued = Set(harness.fileQueueLines("data/queues/ledger").compactMap { try? JSONValue.parse($0)["id"]?.stringValue })
            return (expected.subtracting(hooked), expected.subtracting(queued))
        }
        while Date() < deadline {
            let gaps = missing()
            if gaps.hook.isEmpty && gaps.ledger.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        let gaps = missing()
        #expect(gaps.hook.isEmpty, "never reached the webhook: \(gaps.hook.sorted().prefix(5))")
        #expect(gaps.ledger.isEmpty, "never reached the file queue: \(gaps.ledger.sorted().prefix(5))")
        #expect(harness.deadLetters.isEmpty)
        // Whole lines only, even in segments closed around the crashes.
        for line in harness.fileQueueLines("data/queues/ledger") {
            #expect((try? JSONValue.parse(line)) != nil, "torn line: \(line.prefix(80))")
        }
    }

    /// One POST on a fresh connection; nil when the gateway is down or the connection broke.
    private static func post(_ body: String, port: Int) -> Int? {
        guard let client = try? RawHTTPClient(port: port, timeout: 5) else { return nil }
        defer { client.close() }
        let request = "POST \(Gateway.path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n" + body
        guard (try? client.send(request)) != nil, let response = try? client.readResponse() else { return nil }
        return response.status
    }
}
