import Foundation
import Testing
import StoreRelayCore
import StoreRelayGateway
import StoreRelayTestSupport

/// Enrichment in cluster mode: the push waits on the shared server, so when the instance that
/// took it stops mid-way and never comes back, another instance finishes it once the first
/// one's claim has run out — enriched, stored once, delivered, and gone from the server.
@Suite("Google Play enrichment in cluster mode", .serialized, .timeLimit(.minutes(3)),
       .enabled(if: RedisServerProcess.isAvailable && CommandRunner.isAvailable("python3") && CommandRunner.isAvailable("openssl"),
                "redis-server, python3 or openssl is not installed"))
struct PlayClusterEnrichmentTests {
    static let inboxKey = "storerelay:{storerelay}:inbox"

    func config(_ setup: PlayEnrichmentEndToEndTests.Setup, _ server: RedisServerProcess, instance: String) -> String {
        setup.config + """

            cluster redis://127.0.0.1:\(server.port) {
                instance-id \(instance)
            }
            """
    }

    @Test func anotherInstanceFinishesAPushWhoseInstanceStopped() throws {
        let server = try RedisServerProcess()
        // Google is slow to answer the first instance, which stops before it does.
        let setup = try PlayEnrichmentEndToEndTests.Setup([["endpoint": "api", "delayMs": 60_000]])
        let hooks = GatewayTestHooks(playInboxClaim: .seconds(2))
        let first = try Gateway(config: config(setup, server, instance: "a"), directory: try TestPaths.makeTemporaryDirectory("play-cluster-a"),
                                hooks: hooks)
        #expect(try setup.post(first, messageId: "6001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test")).status == 200)
        #expect(setup.fake.waitFor { $0.contains { $0["endpoint"]?.stringValue == "delayed" } })
        #expect(try server.command("HEXISTS", Self.inboxKey, "6001") == "1", "the push waits on the server")
        first.process.send(SIGTERM)
        #expect(first.process.waitForExit(timeout: 20) != nil)

        let second = try Gateway(config: config(setup, server, instance: "b"), directory: try TestPaths.makeTemporaryDirectory("play-cluster-b"),
                                 hooks: hooks)
        #expect(second.process.waitForLog(timeout: 30) {
            $0["message"]?.stringValue == "play enrichment resumed" && $0["event.id"]?.stringValue == "6001"
        } != nil, "the second instance never took the push over")
        // In cluster mode each instance writes a file queue of its own, named after it.
        let queue = "data/queues/all/b"
        #expect(second.waitForFileQueue(queue, timeout: 30) { $0.count >= 1 })
        let line = try #require(second.fileQueueLines(queue).first)
        let event = try JSONValue.parse(line)
        #expect(event["id"]?.stringValue == "6001")
        #expect(event["environment"]?.stringValue == "sandbox" && event["subscription"]?["testPurchase"] != nil)
        #expect(pollUntil(timeout: 10) { (try? server.command("HLEN", Self.inboxKey)) == "0" }, "the inbox is empty once stored")
        // Pub/Sub's redelivery, to either instance, is a duplicate of the stored event.
        #expect(try setup.post(second, messageId: "6001", data: PlayPushSigner.subscriptionNotification(type: 2, token: "sub-test")).status == 200)
        #expect(second.process.waitForLog {
            $0["message"]?.stringValue == "duplicate notification" && $0["event.id"]?.stringValue == "6001"
        } != nil)
        Thread.sleep(forTimeInterval: 0.5)
        #expect(second.fileQueueLines(queue).count == 1)
    }
}
