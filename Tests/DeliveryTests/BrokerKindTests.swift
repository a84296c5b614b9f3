import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore
import StoreRelayAWS

/// The bus kinds' rules without a broker: what each answer means, and what cannot be sent.
@Suite struct AMQPKindTests {
    private func kind(routingKey: String = "{environment}.{type}") throws -> AMQPKind {
        var options = AMQPOptions(url: try AMQPURL.parse("amqp://127.0.0.1:1/%2f"))
        options.exchange = "appstore"
        let configuration = try GatewayConfiguration.parse(
            text: "destination d amqp amqp://127.0.0.1:1/%2f {\n exchange appstore\n routing-key \(routingKey)\n}\n",
            fileName: "routes.conf", environment: [:])
        guard case .amqp(let parsed)? = configuration.destination(named: "d")?.kind else { throw AMQPError(.refused, "no amqp destination") }
        options = parsed
        return AMQPKind(options: options, logger: .disabled)
    }

    @Test func refusalsAreRejectedAndEverythingElseRetried() throws {
        let kind = try kind()
        defer { kind.publisher.shutdown() }
        let now = Timestamp.now()
        guard case .delivered = kind.classify(.success(()), started: now, durationMs: 1, now: now) else {
            Issue.record("a confirmation was not a delivery")
            return
        }
        for (code, rejected) in [(AMQPError.Code.refused, true), (.unavailable, false), (.timeout, false), (.protocolError, false), (.shutdown, false)] {
            switch kind.classify(.failure(AMQPError(code, "why")), started: now, durationMs: 1, now: now) {
            case .reject(let attempt): #expect(rejected && attempt.error == "why", "\(code)")
            case .retry(let attempt, let after): #expect(!rejected && attempt.error == "why" && after == nil, "\(code)")
            default: Issue.record("\(code) was neither rejected nor retried")
            }
        }
    }

    @Test func aRoutingKeyLongerThanAShortStringIsUnsendable() throws {
        let event = try sampleNotification()
        let short = try kind()
        defer { short.publisher.shutdown() }
        #expect(short.unsendable(event) == nil)
        let long = try kind(routingKey: String(repeating: "k", count: 246) + ".{type}")
        defer { long.publisher.shutdown() }
        #expect(long.unsendable(event)?.contains("at most 255") == true)
    }
}

@Suite struct SQSKindTests {
    private func kind(_ url: String) throws -> SQSKind {
        let configuration = try GatewayConfiguration.parse(
            text: "destination d sqs \(url) {\n access-key-id AKID\n secret-access-key s\n}\n", fileName: "routes.conf", environment: [:])
        guard case .sqs(let options)? = configuration.destination(named: "d")?.kind else { throw AMQPError(.refused, "no sqs destination") }
        return SQSKind(options: options, client: HTTPClient())
    }

    private func job(_ notification: StoredNotification) -> DeliveryJob {
        DeliveryJob(notification: notification, destination: "d", body: Array("{}".utf8), attempts: [], due: .now(), budgetStart: .now())
    }

    @Test func aFIFOQueueGetsGroupAndDeduplicationIds() throws {
        let notification = try sampleNotification()
        let fifo = try kind("https://sqs.eu-west-1.amazonaws.com/1/q.fifo").message(for: job(notification))
        // The sample has no originalTransactionId: its own id groups it.
        #expect(fifo.groupId == (notification.event.originalTransactionId ?? notification.id))
        #expect(fifo.deduplicationId == notification.id)
        #expect(fifo.attributes.map(\.name) == EventMessage.metadata(notification.event).map(\.name))
        let standard = try kind("https://sqs.eu-west-1.amazonaws.com/1/q").message(for: job(notification))
        #expect(standard.groupId == nil && standard.deduplicationId == nil)
    }

    @Test func idsSQSWouldRefuseAreHashed() {
        #expect(SQSKind.fifoId("2000000000000001") == "2000000000000001")
        let hashed = SQSKind.fifoId("an id with spaces")
        #expect(hashed.count == 64 && SQSMessage.isValidFIFOId(hashed) && hashed == SQSKind.fifoId("an id with spaces"))
    }

    @Test func throttlingAndServerErrorsAreRetriedOtherErrorsRejected() throws {
        let kind = try kind("https://sqs.eu-west-1.amazonaws.com/1/q")
        let now = Timestamp.now()
        func outcome(_ status: Int, _ body: String) -> String {
            switch kind.classify(.success(SQSAnswer(status: status, headers: [:], body: Array(body.utf8))), started: now, durationMs: 1, now: now) {
            case .delivered: "delivered"
            case .retry: "retry"
            case .reject: "reject"
            case .unsendable: "unsendable"
            }
        }
        #expect(outcome(200, #"{"MessageId":"m"}"#) == "delivered")
        #expect(outcome(400, #"{"__type":"com.amazonaws.sqs#ThrottlingException"}"#) == "retry")
        #expect(outcome(429, "") == "retry" && outcome(503, "") == "retry")
        #expect(outcome(400, #"{"__type":"com.amazonaws.sqs#QueueDoesNotExist"}"#) == "reject")
        #expect(outcome(403, #"{"__type":"AccessDeniedException"}"#) == "reject")
        guard case .retry = kind.classify(.failure(HTTPClientError(.connect, "refused")), started: now, durationMs: 1, now: now) else {
            Issue.record("an unreachable endpoint was not retried")
            return
        }
    }
}
