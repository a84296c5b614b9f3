import StoreRelayDelivery
import StoreRelayVerification

/// When one notification's acceptance passed its stages (wall-clock nanoseconds), turned
/// into the receive, verify and journal spans of its event's trace once it is answered.
///
/// Only a stored event starts a trace (accepted or quarantined): a rejected body has no
/// event id to derive the trace from, and a duplicate belongs to the trace of its first
/// copy. The receive span's id is derived from the event id (`EventTrace`), so every
/// delivery attempt, whenever it runs, is its child.
struct IntakeSpans: Sendable {
    /// The request was complete and handed to the intake.
    var received: UInt64
    var verifyStart: UInt64 = 0
    var verifyEnd: UInt64 = 0
    /// The durable write began (journal fsync, or the cluster server's acknowledgement).
    var journalStart: UInt64 = 0

    init(received: UInt64) { self.received = received }

    /// The three spans, ended at `answered`; nil for an outcome that starts no trace. A
    /// notification recovered from Apple's history (`recoveredBy`) was fetched, not posted:
    /// its receive span is INTERNAL and says where it came from, but it is the same root, so
    /// its delivery attempts have the parent they name.
    func spans(for outcome: IntakeOutcome, event: NormalizedEvent, store: String, answered: UInt64,
               recoveredBy: String? = nil) -> [TraceSpan]? {
        let label: String
        switch outcome {
        case .accepted: label = "accepted"
        case .quarantined: label = "quarantined"
        case .duplicate, .rejected: return nil
        }
        let trace = EventTrace(eventId: event.id)
        var attributes: [(key: String, value: TraceSpan.Value)] = [
            ("storerelay.event.id", .string(event.id)),
            ("storerelay.event.type", .string(event.type)),
            ("storerelay.environment", .string(event.environment?.rawValue ?? "unknown")),
            ("storerelay.outcome", .string(label)),
        ]
        if let subtype = event.subtype { attributes.append(("storerelay.event.subtype", .string(subtype))) }
        if let bundleId = event.bundleId { attributes.append(("storerelay.bundle_id", .string(bundleId))) }
        if let recoveredBy { attributes.append(("storerelay.recovered_by", .string(recoveredBy))) }
        let receive = TraceSpan(traceId: trace.traceId, spanId: trace.receiveSpanId, parentSpanId: nil, name: "receive",
                                kind: recoveredBy == nil ? .server : .internal, start: received, end: answered,
                                attributes: attributes, status: .ok)
        let verify = TraceSpan(traceId: trace.traceId, spanId: .random(), parentSpanId: trace.receiveSpanId, name: "verify",
                               kind: .internal, start: verifyStart, end: verifyEnd,
                               attributes: [("storerelay.verified", .string(event.verified.map { $0 ? "true" : "false" } ?? "n/a"))],
                               status: .ok)
        let journal = TraceSpan(traceId: trace.traceId, spanId: .random(), parentSpanId: trace.receiveSpanId, name: "journal",
                                kind: .internal, start: journalStart, end: answered,
                                attributes: [("storerelay.store", .string(store))], status: .ok)
        return [receive, verify, journal]
    }
}
