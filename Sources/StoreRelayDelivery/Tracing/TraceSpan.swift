#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One finished span, as OTLP describes it (opentelemetry-proto `trace/v1/trace.proto`):
/// what the gateway records and `OTLPTraceEncoder` writes out.
public struct TraceSpan: Sendable {
    /// OTLP `Span.SpanKind` values.
    public enum Kind: Int64, Sendable {
        case `internal` = 1
        case server = 2
        case client = 3
        case producer = 4
    }

    /// OTLP `Status`: unset, ok, or an error with a message.
    public enum Status: Sendable, Equatable {
        case unset
        case ok
        case error(String)
    }

    /// An attribute value: OTLP `AnyValue`'s string or integer.
    public enum Value: Sendable, Equatable {
        case string(String)
        case int(Int64)
    }

    package var traceId: TraceId
    package var spanId: SpanId
    package var parentSpanId: SpanId?
    package var name: String
    package var kind: Kind
    /// Wall-clock nanoseconds since the Unix epoch (`SpanClock`).
    package var start: UInt64
    package var end: UInt64
    package var attributes: [(key: String, value: Value)]
    package var status: Status

    package init(traceId: TraceId, spanId: SpanId, parentSpanId: SpanId?, name: String, kind: Kind, start: UInt64,
                 end: UInt64, attributes: [(key: String, value: Value)] = [], status: Status = .unset) {
        self.traceId = traceId
        self.spanId = spanId
        self.parentSpanId = parentSpanId
        self.name = name
        self.kind = kind
        self.start = start
        self.end = max(start, end)
        self.attributes = attributes
        self.status = status
    }
}

/// Wall-clock time in nanoseconds, which OTLP's `startTimeUnixNano` wants. `Timestamp` has
/// milliseconds only, and verification takes less than one.
package enum SpanClock {
    package static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
