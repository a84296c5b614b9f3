import StoreRelayCrypto

/// A W3C Trace Context trace id: 16 bytes, never all zero
/// (https://www.w3.org/TR/trace-context/#trace-id).
package struct TraceId: Sendable, Hashable {
    package let bytes: [UInt8]

    /// The first 16 bytes of `bytes`, with the last bit set if all were zero: an all-zero
    /// id is invalid, and a receiver would drop the whole `traceparent`.
    init(_ bytes: some Collection<UInt8>) {
        self.bytes = TraceId.nonZero(Array(bytes.prefix(16)))
    }

    /// 32 lowercase hex digits, as `traceparent` and OTLP/JSON write it.
    package var hex: String { SHA256.hex(bytes) }

    static func nonZero(_ bytes: [UInt8]) -> [UInt8] {
        guard bytes.allSatisfy({ $0 == 0 }), !bytes.isEmpty else { return bytes }
        var fixed = bytes
        fixed[fixed.count - 1] = 1
        return fixed
    }
}

/// A W3C Trace Context span id (`parent-id`): 8 bytes, never all zero.
package struct SpanId: Sendable, Hashable {
    package let bytes: [UInt8]

    init(_ bytes: some Collection<UInt8>) {
        self.bytes = TraceId.nonZero(Array(bytes.prefix(8)))
    }

    /// A fresh id from the CSPRNG: each delivery attempt is a span of its own.
    package static func random() -> SpanId { SpanId(SecureRandom.bytes(8)) }

    /// 16 lowercase hex digits.
    package var hex: String { SHA256.hex(bytes) }
}

/// The trace an accepted event starts, derived from its id alone.
///
/// Apple's POST carries no `traceparent`, so each accepted notification is the root of a
/// trace. The trace id is the first 16 bytes of SHA-256(event id) and the receive span's id
/// the next 8: every attempt, however late — a retry, a delivery resumed after a restart,
/// another cluster instance, an operator's replay — finds the same trace and the same
/// parent without anything stored beside the event. The ids are not random (W3C's
/// `random` flag stays clear); an event id is already public to the receivers.
package struct EventTrace: Sendable, Hashable {
    package let traceId: TraceId
    /// The receive span: the root every other span of the event hangs under.
    package let receiveSpanId: SpanId

    package init(eventId: String) {
        let digest = SHA256.hash(Array(eventId.utf8))
        traceId = TraceId(digest[0..<16])
        receiveSpanId = SpanId(digest[16..<24])
    }

    /// `00-<trace-id>-<span-id>-01`: version 00, sampled (every event is traced)
    /// (https://www.w3.org/TR/trace-context/#traceparent-header).
    package func traceparent(span: SpanId) -> String {
        "00-\(traceId.hex)-\(span.hex)-01"
    }
}
