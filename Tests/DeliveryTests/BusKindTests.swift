import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

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
