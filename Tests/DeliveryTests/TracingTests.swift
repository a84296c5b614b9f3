import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

/// Trace ids, `traceparent`, the OTLP/JSON encoding and the bounded span buffer
/// (SPEC "Event log, search and operational events", Tracing), without a collector.
@Suite struct TracingTests {
    /// `00-<32 hex>-<16 hex>-01` (W3C Trace Context, version 00, sampled).
    static func isTraceparent(_ text: String) -> Bool {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false).map(String.init)
        let hex = { (s: String) in s.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) } }
        return parts.count == 4 && parts[0] == "00" && parts[1].count == 32 && parts[2].count == 16 && parts[3] == "01"
            && parts.allSatisfy(hex) && parts[1] != String(repeating: "0", count: 32) && parts[2] != String(repeating: "0", count: 16)
    }

    @Test func anEventsTraceIsDerivedFromItsIdAlone() {
        let first = EventTrace(eventId: "6f1d2b3c-0000-4000-8000-000000000001")
        let again = EventTrace(eventId: "6f1d2b3c-0000-4000-8000-000000000001")
        let other = EventTrace(eventId: "6f1d2b3c-0000-4000-8000-000000000002")
        // A retry, a restart or another instance finds the same trace and parent.
        #expect(first == again)
        #expect(first.traceId != other.traceId)
        #expect(first.traceId.hex.count == 32 && first.receiveSpanId.hex.count == 16)
        let span = SpanId.random()
        let header = first.traceparent(span: span)
        #expect(Self.isTraceparent(header))
        #expect(header == "00-\(first.traceId.hex)-\(span.hex)-01")
        #expect(SpanId.random() != SpanId.random())
    }

    @Test func allZeroIdsAreNeverWritten() {
        #expect(TraceId([UInt8](repeating: 0, count: 16)).hex == String(repeating: "0", count: 31) + "1")
        #expect(SpanId([UInt8](repeating: 0, count: 8)).hex == String(repeating: "0", count: 15) + "1")
    }

    @Test func theOTLPJSONShape() throws {
        let trace = EventTrace(eventId: "e-1")
        let child = SpanId.random()
        let spans = [
            TraceSpan(traceId: trace.traceId, spanId: trace.receiveSpanId, parentSpanId: nil, name: "receive", kind: .server,
                      start: 1_700_000_000_123_456_789, end: 1_700_000_000_223_456_789,
                      attributes: [("storerelay.event.id", .string("e-1"))], status: .ok),
            TraceSpan(traceId: trace.traceId, spanId: child, parentSpanId: trace.receiveSpanId, name: "deliver billing",
                      kind: .client, start: 1_700_000_001_000_000_000, end: 1_700_000_001_500_000_000,
                      attributes: [("storerelay.attempt", .int(2))], status: .error("HTTP 503")),
        ]
        let json = try JSONValue.parse(String(decoding: OTLPTraceEncoder.request(spans, serviceName: "storerelay", version: "1.2.3"),
                                              as: UTF8.self))
        let resource = try #require(json["resourceSpans"]?.arrayValue?.first)
        let service = try #require(resource["resource"]?["attributes"]?.arrayValue?.first)
        #expect(service["key"] == "service.name" && service["value"]?["stringValue"] == "storerelay")
        let scope = try #require(resource["scopeSpans"]?.arrayValue?.first)
        #expect(scope["scope"]?["name"] == "storerelay")
        let encoded = try #require(scope["spans"]?.arrayValue)
        #expect(encoded.count == 2)
        let receive = encoded[0], deliver = encoded[1]
        #expect(receive["traceId"]?.stringValue == trace.traceId.hex)
        #expect(receive["spanId"]?.stringValue == trace.receiveSpanId.hex)
        #expect(receive["parentSpanId"] == nil)
        #expect(receive["kind"]?.int64Value == 2)
        // Nanosecond times are strings: a JSON number would lose their last digits.
        #expect(receive["startTimeUnixNano"]?.stringValue == "1700000000123456789")
        #expect(receive["endTimeUnixNano"]?.stringValue == "1700000000223456789")
        #expect(receive["status"]?["code"]?.int64Value == 1)
        #expect(deliver["parentSpanId"]?.stringValue == trace.receiveSpanId.hex)
        #expect(deliver["kind"]?.int64Value == 3)
        #expect(deliver["status"]?["code"]?.int64Value == 2 && deliver["status"]?["message"] == "HTTP 503")
        let attempt = try #require(deliver["attributes"]?.arrayValue?.first)
        #expect(attempt["key"] == "storerelay.attempt" && attempt["value"]?["intValue"] == "2")
    }

    @Test func theBufferIsBounded() {
        let buffer = SpanBuffer(capacity: 3)
        let span = Self.span()
        #expect((0..<5).map { _ in buffer.append(span).kept } == [true, true, true, false, false])
        let batch = buffer.takeBatch(limit: 2)
        #expect(batch?.count == 2)
        // One export at a time: nothing more is taken until the first is finished.
        #expect(buffer.takeBatch(limit: 2) == nil)
        buffer.exportFinished()
        #expect(buffer.takeBatch(limit: 2)?.count == 1)
    }

    @Test func aDeadCollectorCostsSpansNotWaiting() throws {
        let dropped = Locked<[String: Int]>([:])
        var limits = SpanExporter.Limits()
        limits.capacity = 10
        limits.batchSize = 100
        limits.interval = .seconds(3600)
        // Port 1 on loopback: nothing listens, every export fails.
        let exporter = SpanExporter(url: try HTTPURL("http://127.0.0.1:1/v1/traces"), limits: limits, serviceVersion: "test",
                                    logger: .disabled) { count, reason in dropped.withLock { $0[reason, default: 0] += count } }
        let started = MonotonicClock.nanoseconds()
        for _ in 0..<25 { exporter.record(Self.span()) }
        // Recording is a lock and an append: 25 spans in far less than a millisecond each.
        #expect(MonotonicClock.nanoseconds() - started < 50_000_000)
        #expect(exporter.waiting == 10)
        #expect(dropped.current["buffer_full"] == 15)
        exporter.stop()
        #expect(waitUntil { dropped.current["export_failed"] == 10 })
    }

    @Test func everyKindCarriesTheAttemptsTraceparent() throws {
        let notification = try sampleNotification(id: "e-1")
        var job = DeliveryJob(notification: notification, destination: "d", position: nil, body: [], attempts: [],
                              due: .now(), budgetStart: .now())
        #expect(!EventMessage.metadata(for: job).contains { $0.name == "traceparent" })
        let traceparent = EventTrace(eventId: "e-1").traceparent(span: .random())
        job.traceparent = traceparent
        // The field AMQP headers, SQS attributes and Redis stream fields are made of.
        #expect(EventMessage.metadata(for: job).last.map { $0.name == "traceparent" && $0.value == traceparent } == true)
        let options = WebhookOptions(url: try HTTPURL("https://hooks.example/x"))
        let request = WebhookRequest(options: options).request(for: notification, body: [], attempt: 1, now: .now(),
                                                               traceparent: traceparent)
        #expect(request.headers["traceparent"] == traceparent)
    }

    @Test func aNATSMessageCarriesItAsAHeader() throws {
        let options = NATSOptions(url: try NATSURL.parse("nats://127.0.0.1:1"))
        let kind = NATSKind(options: options, client: NATSClient(configuration: NATSConfiguration(url: options.url)))
        let notification = try sampleNotification(id: "e-1")
        let traceparent = EventTrace(eventId: "e-1").traceparent(span: .random())
        let message = kind.message(for: notification, body: [], attempt: 2, traceparent: traceparent)
        #expect(message.headers.contains { $0.name == "traceparent" && $0.value == traceparent })
        #expect(!kind.message(for: notification, body: [], attempt: 2).headers.contains { $0.name == "traceparent" })
    }

    static func span() -> TraceSpan {
        let trace = EventTrace(eventId: "e")
        return TraceSpan(traceId: trace.traceId, spanId: .random(), parentSpanId: trace.receiveSpanId, name: "deliver d",
                         kind: .client, start: 1, end: 2)
    }

    /// Polls `condition` for up to 10 s (an export's answer arrives on the exporter's queue).
    func waitUntil(_ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline {
            if condition() { return true }
            usleep(10_000)
        }
        return condition()
    }
}
