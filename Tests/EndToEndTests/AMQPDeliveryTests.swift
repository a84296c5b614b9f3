import Foundation
import StoreRelayCore
import StoreRelayTestSupport
import Testing

/// One broker for the suite: RabbitMQ takes seconds to boot.
private let sharedBroker = Result { try RabbitMQProcess() }

/// The `amqp` destination end to end: the gateway built in-process, a real RabbitMQ, read
/// back with pika. Single-node and cluster mode.
@Suite("AMQP delivery end to end", .serialized, .enabled(if: RabbitMQProcess.isAvailable, Comment(rawValue: RabbitMQProcess.skipMessage)))
struct AMQPDeliveryTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    private func gateway(_ body: String, cluster: RedisServerProcess? = nil) throws -> Gateway {
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-amqp")
        let clusterBlock = cluster.map { "cluster redis://127.0.0.1:\($0.port) {\n    instance-id amqp-a\n}\n" } ?? ""
        return try Gateway(config: Gateway.bareConfig("trust-root ./test-root.pem\n" + clusterBlock + body), directory: directory)
    }

    private func destination(_ name: String, _ broker: RabbitMQProcess, _ options: String) -> String {
        "destination \(name) amqp \(broker.url) {\n    backoff 50ms 500ms\n    timeout 3s\n\(options)\n}"
    }

    /// Reads `queue` until `predicate` holds for everything read so far, or 20 s pass.
    private func messages(_ broker: RabbitMQProcess, queue: String, until predicate: ([JSONValue]) -> Bool) throws -> [JSONValue] {
        var read: [JSONValue] = []
        let deadline = Date().addingTimeInterval(20)
        repeat {
            read += try broker.drain(queue: queue).compactMap { try? JSONValue.parse($0) }
            if predicate(read) { break }
            Thread.sleep(forTimeInterval: 0.1)
        } while Date() < deadline
        return read
    }

    @Test func everyEventOnceWithItsMetadataUnderItsRoutingKey() throws {
        let broker = try sharedBroker.get()
        try broker.declare(exchange: "appstore", queue: "e2e-events", binding: "#")
        let gateway = try gateway("""
            \(destination("bus", broker, "    exchange appstore\n    routing-key {environment}.{type}.{subtype}.{bundleId}"))
            route * * * -> bus
            """)
        let events = [("SUBSCRIBED", "INITIAL_BUY"), ("DID_RENEW", nil), ("REFUND", nil)].map { (UUID().uuidString.lowercased(), $0.0, $0.1) }
        for (uuid, type, subtype) in events {
            #expect(try gateway.post(json: try signer.body(uuid: uuid, type: type, subtype: subtype)).status == 200)
        }
        let read = try messages(broker, queue: "e2e-events") { $0.count >= 3 }
        #expect(read.count == 3)
        for (uuid, type, subtype) in events {
            let message = try #require(read.first { $0["id"]?.stringValue == uuid }, "\(uuid) not read")
            #expect(message["key"]?.stringValue == "sandbox.\(type).\(subtype ?? "none").com.acme.journal")
            #expect(message["mode"]?.int64Value == 2 && message["type"]?.stringValue == "application/json")
            let headers = try #require(message["headers"])
            #expect(headers["id"]?.stringValue == uuid && headers["type"]?.stringValue == type)
            #expect(headers["subtype"]?.stringValue == subtype)
            #expect(headers["environment"]?.stringValue == "sandbox" && headers["bundleId"]?.stringValue == "com.acme.journal")
            #expect(headers["verified"]?.stringValue == "true")
            let body = try JSONValue.parse(try #require(message["body"]?.stringValue))
            #expect(body["id"]?.stringValue == uuid && body["type"]?.stringValue == type)
        }
        #expect(gateway.deadLetters.isEmpty)
    }

    @Test func aBrokerRestartedMidRunLosesNothing() throws {
        let broker = try sharedBroker.get()
        try broker.declare(exchange: "appstore", queue: "e2e-restart", binding: "restart.#")
        let gateway = try gateway("""
            \(destination("bus", broker, "    exchange appstore\n    routing-key restart.{type}\n    max-attempts 1000"))
            route * * * -> bus
            """)
        var uuids: [String] = []
        func post(_ count: Int) throws {
            for _ in 0..<count {
                let uuid = UUID().uuidString.lowercased()
                uuids.append(uuid)
                #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
            }
        }
        try post(5)
        var read = try messages(broker, queue: "e2e-restart") { $0.count >= 5 }
        broker.stop()
        try post(5)
        Thread.sleep(forTimeInterval: 0.5)  // attempts fail and are scheduled for retry
        try broker.restart()
        // Until every event was read: messages read and acked before the kill may come back too
        // (the broker had not yet written the acks down), which must not end the wait early.
        let before = read
        read += try messages(broker, queue: "e2e-restart") { Set((before + $0).compactMap { $0["id"]?.stringValue }) == Set(uuids) }
        // At least once: a confirmation lost in the crash may bring a message twice, never none.
        #expect(Set(read.compactMap { $0["id"]?.stringValue }) == Set(uuids))
        #expect(gateway.deadLetters.isEmpty)
    }

    @Test func refusedPublishesEndAsDeadLetters() throws {
        let broker = try sharedBroker.get()
        // An exchange of its own: another test's queue bound to `#` would route anything.
        try broker.declare(exchange: "refusals", queue: "e2e-refused", binding: "bound.#")
        let gateway = try gateway("""
            \(destination("unroutable", broker, "    exchange refusals\n    routing-key nobody.{type}\n    max-attempts 2"))
            \(destination("missing", broker, "    exchange no-such-exchange\n    max-attempts 2"))
            route * * * -> unroutable, missing
            """)
        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(gateway.waitForDeadLetters { $0.count == 2 }, "\(gateway.deadLetters)")
        let letters = gateway.deadLetters
        for name in ["unroutable", "missing"] {
            let letter = try #require(letters.first { $0["destination"]?.stringValue == name }, "\(name)")
            #expect(letter["reason"]?.stringValue == "rejected", "\(letter)")
            #expect(letter["detail"]?.stringValue?.hasPrefix("the destination refused the message, which is not retried: ") == true, "\(letter)")
        }
        let text = letters.map { "\($0)" }.joined()
        #expect(text.contains("NO_ROUTE") && text.contains("404"), "\(text)")

        // Once a queue is bound for the key, the replayed letter goes back to the same exchange.
        try broker.declare(exchange: "refusals", queue: "e2e-replayed", binding: "nobody.#")
        let admin = try AdminGateway(gateway)
        let id = try #require(letters.first { $0["destination"]?.stringValue == "unroutable" }?["id"]?.stringValue)
        let replay = try admin.post("/api/dead-letters/\(id)/replay")
        #expect(replay.status == 200 || replay.status == 202, "\(replay.body)")
        let replayed = try messages(broker, queue: "e2e-replayed") { !$0.isEmpty }
        #expect(replayed.map { $0["id"]?.stringValue } == [uuid])
        #expect(replayed.first?["key"]?.stringValue == "nobody.DID_RENEW")
    }

    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed"))
    func clusterModeDeliversToo() throws {
        let broker = try sharedBroker.get()
        try broker.declare(exchange: "appstore", queue: "e2e-cluster", binding: "cluster.#")
        let server = try RedisServerProcess()
        let gateway = try gateway("""
            \(destination("bus", broker, "    exchange appstore\n    routing-key cluster.{type}"))
            route * * * -> bus
            """, cluster: server)
        let uuids = (0..<3).map { _ in UUID().uuidString.lowercased() }
        for uuid in uuids { #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200) }
        let read = try messages(broker, queue: "e2e-cluster") { $0.count >= 3 }
        #expect(Set(read.compactMap { $0["id"]?.stringValue }) == Set(uuids))
        withExtendedLifetime(server) {}
    }
}
