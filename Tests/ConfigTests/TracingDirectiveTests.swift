import Testing
import StoreRelayCore
@testable import StoreRelayConfig

/// `tracing otlp URL [ca-file PEM-FILE]` (SPEC "Event log, search and operational events", Tracing).
@Suite struct TracingDirectiveTests {
    @Test func aLoopbackCollectorOverPlainHTTP() throws {
        let c = try parsed("tracing otlp http://127.0.0.1:4318/v1/traces\n")
        #expect(c.tracing?.url.description == "http://127.0.0.1:4318/v1/traces")
        #expect(c.tracing?.caFile == nil)
        #expect(c.checkReport().contains("Tracing: spans as OTLP/HTTP JSON to http://127.0.0.1:4318/v1/traces"))
    }

    @Test func anHTTPSCollectorWithItsCA() throws {
        let c = try parsed("tracing otlp https://otel.internal:4318/v1/traces ca-file ./otel-ca.pem\n")
        #expect(c.tracing?.url.description == "https://otel.internal:4318/v1/traces")
        #expect(c.tracing?.caFile == "./otel-ca.pem")
        #expect(c.referencedFiles.contains { $0.directive == "tracing ca-file" && $0.path == "./otel-ca.pem" })
    }

    @Test func offByDefault() throws {
        #expect(try parsed("").tracing == nil)
    }

    @Test func refusals() {
        // Spans name events and apps: plaintext only to this machine.
        expectError("tracing otlp http://otel.internal:4318/v1/traces\n", .invalidValue, line: 1, column: 14,
                    containing: "loopback")
        expectError("tracing zipkin http://127.0.0.1:9411\n", .invalidValue, line: 1, column: 9, containing: "expected 'otlp'")
        expectError("tracing otlp\n", .missingArgument, line: 1, column: 13)
        expectError("tracing otlp ftp://127.0.0.1/x\n", .invalidValue, line: 1, column: 14)
        expectError("tracing otlp https://otel.example ca-file\n", .invalidValue, line: 1, column: 35, containing: "ca-file PEM-FILE")
        expectError("tracing otlp https://a.example\ntracing otlp https://b.example\n", .duplicate, line: 2, column: 1)
    }
}
