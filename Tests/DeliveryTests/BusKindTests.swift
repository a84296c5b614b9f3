import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

/// What the `redis-stream` and `nats` kinds send and how they classify answers, without a
/// server (SPEC "Destinations beyond webhooks").
@Suite struct BusKindTests {
    private func configuration(_ text: String) throws -> DestinationConfiguration {
        try #require(try GatewayConfiguration.parse(text: text + "\nroute * * * -> d\n").destination(named: "d"))
    }

    private let started = Timestamp(milliseconds: 1_700_000_000_000)

    @Test func theXADDHoldsTheMetadataAndTheBody() throws {
        guard case .redisStream(let options) = try configuration("""
            destination d redis-stream redis://127.0.0.1:1/0 {
                stream appstore:{environment}:{type}
                max-length 500
            }
            """).kind else { Issue.record("not a redis-stream"); return }
        let kind = RedisStreamKind(options: options, client: RedisClient(configuration: RedisConfiguration(url: options.url)))
        let notification = try sampleNotification(id: "e-1")
        let job = DeliveryJob(notification: notification, destination: "d", position: nil, body: kind.prepare(notification),
                              attempts: [], due: .now(), budgetStart: .now())
        let arguments = kind.command(for: job).arguments.map { String(decoding: $0, as: UTF8.self) }
        #expect(Array(arguments.prefix(6)) == ["XADD", "appstore:sandbox:DID_RENEW", "MAXLEN", "~", "500", "*"])
        let fields = Dictionary(uniqueKeysWithValues: stride(from: 6, to: arguments.count, by: 2).map { (arguments[$0], arguments[$0 + 1]) })
        #expect(fields["id"] == "e-1" && fields["type"] == "DID_RENEW" && fields["environment"] == "sandbox")
        #expect(fields["bundleId"] == "com.acme.journal")
        #expect(try JSONValue.parse(try #require(fields["event"]))["id"]?.stringValue == "e-1")
        #expect(fields["orderingGap"] == nil)
        // Released by an ordering gap: the dead-lettered event's id travels as a field.
        var released = job
        released.orderingGap = "e-0"
        let gapFields = kind.command(for: released).arguments.map { String(decoding: $0, as: UTF8.self) }
        #expect(gapFields.contains("orderingGap") && gapFields[gapFields.firstIndex(of: "orderingGap")! + 1] == "e-0")
        #expect(!gapFields.contains("redelivery"))
        // Redelivered by an operator: marked as such.
        var redelivered = job
        redelivered.redelivery = true
        let redeliveryFields = kind.command(for: redelivered).arguments.map { String(decoding: $0, as: UTF8.self) }
        #expect(redeliveryFields.contains("redelivery") && redeliveryFields[redeliveryFields.firstIndex(of: "redelivery")! + 1] == "1")
    }

    @Test func redisAnswersAreClassified() {
        let kind = RedisStreamKind(options: RedisStreamOptions(url: try! RedisURL.parse("redis://127.0.0.1:1")),
                                   client: RedisClient(configuration: RedisConfiguration(url: try! RedisURL.parse("redis://127.0.0.1:1"))))
        let classify = { (answer: Result<RESPValue, RedisError>) in kind.classify(answer, started: started, durationMs: 1, now: started) }
        guard case .delivered = classify(.success(.bulkString(Array("1700000000000-0".utf8)))) else { Issue.record("an id is delivery"); return }
        guard case .reject(let refused) = classify(.success(.error("WRONGTYPE Operation against a key holding the wrong kind of value"))) else {
            Issue.record("WRONGTYPE is a refusal"); return
        }
        #expect(refused.error == "Redis refused XADD: WRONGTYPE Operation against a key holding the wrong kind of value")
        for transient in ["LOADING Redis is loading", "OOM command not allowed", "READONLY You can't write", "BUSY script"] {
            guard case .retry = classify(.success(.error(transient))) else { Issue.record("\(transient) is retried"); continue }
        }
        guard case .retry(let lost, _) = classify(.failure(RedisError(.unavailable, "not connected"))) else { Issue.record("retried"); return }
        #expect(lost.error == "unavailable: not connected")
        guard case .retry = classify(.success(.integer(3))) else { Issue.record("an unexpected reply is retried"); return }
    }

    @Test func theNATSMessageCarriesTheIdAndMetadataAsHeaders() throws {
        guard case .nats(let options) = try configuration("""
            destination d nats nats://127.0.0.1:1 {
                subject appstore.{environment}.{bundleId}.{type}
                format apple
            }
            """).kind else { Issue.record("not nats"); return }
        let kind = NATSKind(options: options, client: NATSClient(configuration: NATSConfiguration(url: options.url)))
        let notification = try sampleNotification(id: "e-2")
        #expect(kind.prepare(notification) == notification.body)
        let message = kind.message(for: notification, body: notification.body, attempt: 3)
        #expect(message.subject == "appstore.sandbox.com.acme.journal.DID_RENEW")
        let headers = Dictionary(uniqueKeysWithValues: message.headers.map { ($0.name, $0.value) })
        #expect(message.headers.first?.name == "Nats-Msg-Id" && headers["Nats-Msg-Id"] == "e-2")
        #expect(headers["StoreRelay-Event-Id"] == "e-2" && headers["StoreRelay-Type"] == "DID_RENEW")
        #expect(headers["StoreRelay-Environment"] == "sandbox" && headers["StoreRelay-Bundle-Id"] == "com.acme.journal")
        #expect(headers["StoreRelay-Attempt"] == "3" && headers["StoreRelay-Ordering-Gap"] == nil)
        let released = kind.message(for: notification, body: notification.body, attempt: 1, orderingGap: "e-1")
        #expect(released.headers.contains { $0.name == "StoreRelay-Ordering-Gap" && $0.value == "e-1" })
        #expect(!released.headers.contains { $0.name == "StoreRelay-Redelivery" })
        let again = kind.message(for: notification, body: notification.body, attempt: 1, redelivery: true)
        #expect(again.headers.contains { $0.name == "StoreRelay-Redelivery" && $0.value == "1" })
        #expect(kind.unsendable(notification) == nil)
        let poison = try sampleNotification(id: "e-3", typeJSON: #"DID RENEW\r\nX: 1"#)
        #expect(kind.unsendable(poison)?.hasPrefix("the event cannot be published to NATS: the subject") == true)
    }

    @Test func natsAnswersAreClassified() {
        let options = NATSOptions(url: try! NATSURL.parse("nats://127.0.0.1:1"))
        let kind = NATSKind(options: options, client: NATSClient(configuration: NATSConfiguration(url: options.url)))
        let classify = { (answer: Result<NATSPublishAnswer, NATSError>) in kind.classify(answer, started: started, durationMs: 1, now: started) }
        guard case .delivered = classify(.success(.acknowledged(stream: "S", sequence: 1, duplicate: false))) else { Issue.record("ack"); return }
        guard case .delivered = classify(.success(.acknowledged(stream: "S", sequence: 1, duplicate: true))) else { Issue.record("dup"); return }
        guard case .reject(let refused) = classify(.success(.refused("no JetStream stream takes subject 'x'"))) else { Issue.record("refusal"); return }
        #expect(refused.error == "no JetStream stream takes subject 'x'" && refused.status == nil)
        guard case .retry(let timedOut, _) = classify(.failure(NATSError(.timeout, "no PubAck"))) else { Issue.record("timeout"); return }
        #expect(timedOut.error == "timeout: no PubAck")
        guard case .retry = classify(.failure(NATSError(.connection, "lost"))) else { Issue.record("lost"); return }
    }
}
