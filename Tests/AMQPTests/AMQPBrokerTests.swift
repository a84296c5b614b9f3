import Dispatch
import Foundation
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport
import Testing

/// One broker for the suite: RabbitMQ takes seconds to boot.
private let sharedBroker = Result { try RabbitMQProcess(tls: try TLSTestCertificates.shared().localhost) }

/// The publisher against a real RabbitMQ, read back with pika.
@Suite(.serialized, .enabled(if: RabbitMQProcess.isAvailable, Comment(rawValue: RabbitMQProcess.skipMessage)))
struct AMQPBrokerTests {
    private func publisher(_ broker: RabbitMQProcess, url: String? = nil, timeout: Duration = .seconds(5)) throws -> AMQPPublisher {
        var configuration = AMQPConfiguration(url: try AMQPURL.parse(url ?? broker.url))
        configuration.publishTimeout = timeout
        configuration.connectTimeout = timeout
        return AMQPPublisher(configuration: configuration)
    }

    private func publish(_ publisher: AMQPPublisher, _ message: AMQPMessage) -> Result<Void, AMQPError> {
        Result { () throws(AMQPError) in try waitForCompletion { publisher.publish(message, completion: $0) } }
    }

    private func declare(_ broker: RabbitMQProcess, exchange: String, queue: String, binding: String) throws {
        try broker.declare(exchange: exchange, queue: queue, binding: binding)
    }

    private func drain(_ broker: RabbitMQProcess, queue: String) throws -> [[String: Any]] {
        try broker.drain(queue: queue).compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
    }

    @Test func confirmedMessagesArriveWithTheirPropertiesAndHeaders() throws {
        let broker = try sharedBroker.get()
        try declare(broker, exchange: "appstore", queue: "confirmed", binding: "Sandbox.#")
        let publisher = try publisher(broker)
        defer { publisher.shutdown() }
        let big = String(repeating: "x", count: 300_000)  // above frame-max: several body frames
        let bodies = ["{\"n\":1}", "{\"n\":2}", big]
        for (index, body) in bodies.enumerated() {
            let message = AMQPMessage(exchange: "appstore", routingKey: "Sandbox.TEST", messageId: "event-\(index)",
                                      headers: [.init(name: "type", value: "TEST"), .init(name: "verified", value: "true")],
                                      body: Array(body.utf8))
            try publish(publisher, message).get()
        }
        let messages = try drain(broker, queue: "confirmed")
        #expect(messages.count == 3)
        #expect(messages.map { $0["id"] as? String } == ["event-0", "event-1", "event-2"])
        #expect(messages.map { $0["body"] as? String } == bodies)
        #expect(messages.allSatisfy { $0["mode"] as? Int == 2 && $0["type"] as? String == "application/json" })
        #expect((messages.first?["headers"] as? [String: String]) == ["type": "TEST", "verified": "true"])
    }

    @Test func concurrentPublishesAreEachConfirmed() throws {
        let broker = try sharedBroker.get()
        try declare(broker, exchange: "appstore", queue: "concurrent", binding: "Concurrent.*")
        let publisher = try publisher(broker)
        defer { publisher.shutdown() }
        let group = DispatchGroup()
        let failures = Locked<[AMQPError]>([])
        for index in 0..<200 {
            group.enter()
            publisher.publish(AMQPMessage(exchange: "appstore", routingKey: "Concurrent.x", messageId: "c\(index)", body: [0x7B, 0x7D])) {
                if case .failure(let error) = $0 { failures.withLock { $0.append(error) } }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 20) == .success)
        #expect(failures.current.isEmpty, "\(failures.current)")
        #expect(try drain(broker, queue: "concurrent").count == 200)
    }

    @Test func anUnroutableMessageIsRefusedNotDropped() throws {
        let broker = try sharedBroker.get()
        try declare(broker, exchange: "appstore", queue: "routed", binding: "Routed.*")
        let publisher = try publisher(broker)
        defer { publisher.shutdown() }
        let result = publish(publisher, AMQPMessage(exchange: "appstore", routingKey: "Nobody.listens", messageId: "lost", body: [1]))
        guard case .failure(let error) = result else { Issue.record("an unroutable message was confirmed"); return }
        #expect(error.code == .refused && error.message.contains("NO_ROUTE"), "\(error)")
        // The connection stays usable.
        try publish(publisher, AMQPMessage(exchange: "appstore", routingKey: "Routed.x", messageId: "ok", body: [1])).get()
    }

    @Test func aMissingExchangeIsRefusedAndTheNextPublishReconnects() throws {
        let broker = try sharedBroker.get()
        try declare(broker, exchange: "appstore", queue: "after-missing", binding: "After.*")
        let publisher = try publisher(broker)
        defer { publisher.shutdown() }
        let result = publish(publisher, AMQPMessage(exchange: "no-such-exchange", routingKey: "x", messageId: "m", body: [1]))
        guard case .failure(let error) = result else { Issue.record("a publish to a missing exchange was confirmed"); return }
        #expect(error.code == .refused && error.message.contains("404"), "\(error)")
        try publish(publisher, AMQPMessage(exchange: "appstore", routingKey: "After.x", messageId: "m2", body: [1])).get()
    }

    @Test func aWrongPasswordOrVhostIsRefused() throws {
        let broker = try sharedBroker.get()
        for url in ["amqp://guest:wrong@127.0.0.1:\(broker.port)/%2f", "amqp://guest:guest@127.0.0.1:\(broker.port)/nope"] {
            let publisher = try publisher(broker, url: url)
            defer { publisher.shutdown() }
            let result = publish(publisher, AMQPMessage(exchange: "appstore", routingKey: "x", messageId: "m", body: [1]))
            guard case .failure(let error) = result else { Issue.record("\(url) was confirmed"); continue }
            #expect(error.code == .refused, "\(url): \(error)")
            #expect(!error.message.contains("wrong"))
        }
    }

    @Test func amqpsVerifiesTheBrokerAgainstTheCAFile() throws {
        let broker = try sharedBroker.get()
        try declare(broker, exchange: "appstore", queue: "over-tls", binding: "Tls.*")
        let url = "amqps://guest:guest@localhost:\(try #require(broker.tlsPort))/%2f"
        var configuration = AMQPConfiguration(url: try AMQPURL.parse(url))
        configuration.caFile = try TLSTestCertificates.shared().caFile
        let trusting = AMQPPublisher(configuration: configuration)
        defer { trusting.shutdown() }
        try publish(trusting, AMQPMessage(exchange: "appstore", routingKey: "Tls.x", messageId: "tls", body: [1])).get()
        #expect(try drain(broker, queue: "over-tls").map { $0["id"] as? String } == ["tls"])

        let untrusting = try publisher(broker, url: url)
        defer { untrusting.shutdown() }
        let result = publish(untrusting, AMQPMessage(exchange: "appstore", routingKey: "Tls.x", messageId: "no", body: [1]))
        guard case .failure(let error) = result else { Issue.record("a broker with an unknown CA was trusted"); return }
        #expect(error.code == .unavailable, "\(error)")
    }

    @Test func noBrokerIsUnavailable() throws {
        let port = try RedisServerProcess.freePort()
        var configuration = AMQPConfiguration(url: try AMQPURL.parse("amqp://guest:guest@127.0.0.1:\(port)/%2f"))
        configuration.connectTimeout = .seconds(2)
        let publisher = AMQPPublisher(configuration: configuration)
        defer { publisher.shutdown() }
        let result = publish(publisher, AMQPMessage(exchange: "appstore", routingKey: "x", messageId: "m", body: [1]))
        guard case .failure(let error) = result else { Issue.record("confirmed without a broker"); return }
        #expect(error.code == .unavailable, "\(error)")
    }
}
