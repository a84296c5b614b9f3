import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayCore
import StoreRelayTestSupport

/// The operational events' queue against a real receiver (the Python sink, which checks the
/// Standard Webhooks signature itself): signed like events, and bounded.
@Suite(.serialized) struct OperationalEventQueueTests {
    static let secret = "whsec_" + Base64.encode(Array("the-operational-key-of-32-bytes!".utf8))

    private func queue(_ url: String, options: String = "", capacity: Int = 1000) throws -> OperationalEventQueue {
        let configuration = try GatewayConfiguration.parse(text: """
            destination ops webhook \(url) {
                signing-secret \(Self.secret)
                backoff 50ms 50ms
                \(options)
            }
            operational-events -> ops
            """)
        return try OperationalEventQueue(try #require(configuration.destinations.first), logger: .disabled, capacity: capacity)
    }

    @Test func anEventIsSignedAndCarriesItsTypeAndDetails() throws {
        let sink = try WebhookSink(secret: Self.secret)
        let queue = try self.queue(sink.url("/flaky/1"))
        defer { queue.stop() }
        let event = OperationalEvent(type: "disk.low", at: Timestamp(milliseconds: 1_800_000_000_000),
                                     details: JSONObject([("path", "/var/lib/storerelay"), ("freeBytes", 1024)]))
        queue.send(event)
        #expect(sink.waitFor { $0.count == 2 }, "one 503, then delivered on the retry")
        let delivered = try #require(sink.requests.last)
        #expect(delivered["signatureValid"] == true)
        #expect(delivered["headers"]?["webhook-id"]?.stringValue == event.id)
        #expect(delivered["headers"]?["storerelay-type"]?.stringValue == "disk.low")
        #expect(delivered["headers"]?["storerelay-attempt"]?.stringValue == "2")
        let body = try JSONValue.parse(try #require(delivered["body"]?.stringValue))
        #expect(body.objectValue?.keys == ["id", "type", "at", "path", "freeBytes"])
        #expect(body["at"]?.stringValue == "2027-01-15T08:00:00.000Z" && body["freeBytes"]?.int64Value == 1024)
        #expect(pollUntil(timeout: 5) { queue.counts == { var c = OperationalEventQueue.Counts(); c.delivered = 1; return c }() })
    }

    /// At capacity the oldest waiting event gives way to the newest: a destination that
    /// hangs cannot make the gateway hold every event it ever raised.
    @Test func atCapacityTheOldestWaitingIsDropped() throws {
        let sink = try WebhookSink(secret: Self.secret)
        let queue = try self.queue(sink.url("/hang"), options: "concurrency 1\ntimeout 20s", capacity: 2)
        defer { queue.stop() }
        let events = (0..<4).map { OperationalEvent(type: "test.\($0)", at: Timestamp(milliseconds: 1_800_000_000_000)) }
        for event in events { queue.send(event) }
        // The first is in flight (the sink never answers), two wait: the second gave way.
        #expect(pollUntil(timeout: 5) { queue.counts.dropped == 1 })
        #expect(sink.waitFor { $0.count == 1 })
        #expect(sink.requests.first?["headers"]?["storerelay-type"]?.stringValue == "test.0")
    }
}
