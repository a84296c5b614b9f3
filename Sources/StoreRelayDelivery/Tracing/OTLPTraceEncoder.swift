import StoreRelayCore

/// Writes spans as an OTLP/HTTP JSON `ExportTraceServiceRequest`
/// (https://opentelemetry.io/docs/specs/otlp/#json-protobuf-encoding): field names in
/// lowerCamelCase, trace and span ids as hex (not protobuf's base64), 64-bit integers and
/// nanosecond times as decimal strings, enums as integers.
package enum OTLPTraceEncoder {
    /// `{"resourceSpans":[{"resource":{...service.name...},"scopeSpans":[{"scope":...,"spans":[...]}]}]}`.
    package static func request(_ spans: [TraceSpan], serviceName: String, version: String) -> [UInt8] {
        let resource: JSONValue = ["attributes": .array([attribute("service.name", .string(serviceName)),
                                                          attribute("service.version", .string(version))])]
        let scope: JSONValue = ["name": "storerelay", "version": .string(version)]
        let scopeSpans: JSONValue = ["scope": scope, "spans": .array(spans.map(span))]
        let resourceSpans: JSONValue = ["resource": resource, "scopeSpans": [scopeSpans]]
        let body: JSONValue = ["resourceSpans": [resourceSpans]]
        return body.serializedBytes()
    }

    static func span(_ span: TraceSpan) -> JSONValue {
        var members: [JSONObject.Member] = [
            ("traceId", .string(span.traceId.hex)),
            ("spanId", .string(span.spanId.hex)),
        ]
        if let parent = span.parentSpanId { members.append(("parentSpanId", .string(parent.hex))) }
        members += [
            ("name", .string(span.name)),
            ("kind", .number(JSONNumber(span.kind.rawValue))),
            ("startTimeUnixNano", .string(String(span.start))),
            ("endTimeUnixNano", .string(String(span.end))),
            ("attributes", .array(span.attributes.map { attribute($0.key, $0.value) })),
            ("status", status(span.status)),
        ]
        return .object(JSONObject(members))
    }

    static func attribute(_ key: String, _ value: TraceSpan.Value) -> JSONValue {
        let typed: JSONValue = switch value {
        case .string(let text): ["stringValue": .string(text)]
        // int64 is a string in proto3's JSON mapping, which OTLP/JSON follows.
        case .int(let number): ["intValue": .string(String(number))]
        }
        return ["key": .string(key), "value": typed]
    }

    /// OTLP `Status.StatusCode`: 0 unset, 1 ok, 2 error.
    static func status(_ status: TraceSpan.Status) -> JSONValue {
        switch status {
        case .unset: ["code": 0]
        case .ok: ["code": 1]
        case .error(let message): ["code": 2, "message": .string(message)]
        }
    }
}
