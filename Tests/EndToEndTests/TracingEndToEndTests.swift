import Foundation
import Testing
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport

/// An OTLP/HTTP collector in the test process: StoreRelay's own HTTP server on a loopback
/// port, keeping every posted body. It answers `status` (200 unless a test says otherwise).
final class OTLPCollector: Sendable {
    private let server: HTTPServer
    private let received = Locked<[(contentType: String?, body: JSONValue?)]>([])
    let port: Int

    init() throws {
        let received = self.received
        server = HTTPServer(configuration: HTTPServerConfiguration(address: "127.0.0.1:0")) { request, responder in
            received.withLock { $0.append((request.headers["Content-Type"], try? JSONValue.parse(String(decoding: request.body, as: UTF8.self)))) }
            _ = responder.respond(.json("{}"))
        }
        port = try server.start()
    }

    deinit { server.shutdown() }

    var url: String { "http://127.0.0.1:\(port)/v1/traces" }
    var requests: [(contentType: String?, body: JSONValue?)] { received.current }

    /// Every span of every request, flattened.
    var spans: [JSONValue] {
        requests.flatMap { request -> [JSONValue] in
            (request.body?["resourceSpans"]?.arrayValue ?? []).flatMap { resource in
                (resource["scopeSpans"]?.arrayValue ?? []).flatMap { $0["spans"]?.arrayValue ?? [] }
            }
        }
    }
}

/// `traceparent` on deliveries and spans exported to `tracing otlp` (SPEC "Event log, search
/// and operational events", Tracing), with the real gateway, a Python webhook sink and an
/// in-process collector.
@Suite("Tracing end to end", .serialized)
struct TracingEndToEndTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    private func gateway(_ body: String) throws -> Gateway {
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-tracing")
        return try Gateway(config: Gateway.bareConfig("trust-root ./test-root.pem\n" + body), directory: directory)
    }

    private static func isHex(_ text: String?, length: Int) -> Bool {
        guard let text else { return false }
        return text.count == length && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }

    private static func attribute(_ span: JSONValue, _ key: String) -> JSONValue? {
        span["attributes"]?.arrayValue?.first { $0["key"]?.stringValue == key }?["value"]
    }

    @Test func retriedDeliveriesAreChildrenOfTheReceiveSpan() throws {
        let collector = try OTLPCollector()
        let sink = try WebhookSink(secret: testSigningSecret)
        let gateway = try self.gateway("""
            tracing otlp \(collector.url)
            \(webhookDestination("billing", sink.url("/flaky/2")))
            route * * * -> billing
            """)
        let uuid = UUID().uuidString.lowercased()
        #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        #expect(sink.waitFor { $0.count == 3 })
        // receive, verify, journal and three attempts, exported within the 1 s batch interval.
        #expect(pollUntil(timeout: 20) { collector.spans.count >= 6 })

        let traceparents = sink.requests(path: "/flaky/2").compactMap { $0["headers"]?["traceparent"]?.stringValue }
        #expect(traceparents.count == 3)
        let parts = traceparents.map { $0.split(separator: "-").map(String.init) }
        for part in parts {
            #expect(part.count == 4 && part[0] == "00" && part[3] == "01")
            #expect(Self.isHex(part[1], length: 32) && Self.isHex(part[2], length: 16))
        }
        // One trace across the retries; a span of its own for each attempt.
        #expect(Set(parts.map { $0[1] }).count == 1)
        #expect(Set(parts.map { $0[2] }).count == 3)

        #expect(collector.requests.allSatisfy { $0.contentType == "application/json" })
        let resource = collector.requests.first?.body?["resourceSpans"]?.arrayValue?.first?["resource"]
        #expect(resource?["attributes"]?.arrayValue?.first?["key"] == "service.name")
        let spans = collector.spans
        for span in spans {
            #expect(span["traceId"]?.stringValue == parts.first?[1])
            #expect(Self.isHex(span["spanId"]?.stringValue, length: 16))
            let start = try #require(span["startTimeUnixNano"]?.stringValue.flatMap(UInt64.init))
            let end = try #require(span["endTimeUnixNano"]?.stringValue.flatMap(UInt64.init))
            #expect(start <= end && start > 1_600_000_000_000_000_000)
        }
        let receive = try #require(spans.first { $0["name"] == "receive" })
        #expect(receive["parentSpanId"] == nil)
        #expect(receive["kind"]?.int64Value == 2)
        #expect(Self.attribute(receive, "storerelay.event.id")?["stringValue"]?.stringValue == uuid)
        let receiveId = try #require(receive["spanId"]?.stringValue)
        for name in ["verify", "journal"] {
            #expect(spans.first { $0["name"]?.stringValue == name }?["parentSpanId"]?.stringValue == receiveId)
        }
        let attempts = spans.filter { $0["name"] == "deliver billing" }
            .sorted { (Self.attribute($0, "storerelay.attempt")?["intValue"]?.stringValue ?? "") < (Self.attribute($1, "storerelay.attempt")?["intValue"]?.stringValue ?? "") }
        #expect(attempts.count == 3)
        #expect(attempts.allSatisfy { $0["parentSpanId"]?.stringValue == receiveId })
        // The span a receiver sees as its parent is the attempt's own span.
        #expect(attempts.compactMap { $0["spanId"]?.stringValue } == parts.map { $0[2] })
        #expect(attempts.map { Self.attribute($0, "storerelay.attempt")?["intValue"]?.stringValue } == ["1", "2", "3"])
        #expect(attempts.map { Self.attribute($0, "storerelay.outcome")?["stringValue"]?.stringValue } == ["retry", "retry", "delivered"])
        #expect(attempts.map { $0["status"]?["code"]?.int64Value } == [2, 2, 1])
        #expect(attempts.allSatisfy { Self.attribute($0, "storerelay.destination")?["stringValue"] == "billing" })
        #expect(attempts.first.flatMap { Self.attribute($0, "http.response.status_code")?["intValue"]?.stringValue } == "503")
    }

    @Test func aCollectorThatIsDownDoesNotTouchAcceptance() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        // Port 1 on loopback: nothing listens, every export fails.
        let gateway = try self.gateway("""
            tracing otlp http://127.0.0.1:1/v1/traces
            \(webhookDestination("billing", sink.url("/ok")))
            route * * * -> billing
            """)
        let admin = try AdminGateway(gateway)
        for _ in 0..<10 {
            let started = Date()
            #expect(try gateway.post(json: try signer.body(uuid: UUID().uuidString.lowercased())).status == 200)
            #expect(Date().timeIntervalSince(started) < 2)
        }
        #expect(sink.waitFor { $0.count == 10 })
        #expect(sink.requests(path: "/ok").allSatisfy { $0["headers"]?["traceparent"]?.stringValue?.hasPrefix("00-") == true })
        // The spans that could not be sent are counted, not kept.
        #expect(pollUntil(timeout: 20) {
            let metrics = (try? admin.metrics) ?? ""
            return metrics.split(separator: "\n").contains { line in
                line.hasPrefix("storerelay_trace_spans_dropped_total{reason=\"export_failed\"}") && !line.hasSuffix(" 0")
            }
        })
    }
}
