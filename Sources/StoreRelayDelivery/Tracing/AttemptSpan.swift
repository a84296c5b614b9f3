/// A delivery attempt as a span of its event's trace (`EventTrace`): started when the
/// attempt is, a child of the receive span, finished with the attempt's outcome.
struct AttemptSpan: Sendable {
    let trace: EventTrace
    let spanId = SpanId.random()
    /// 1 for the first attempt at this destination, counting those before a replay.
    let number: Int
    let destination: String
    let kindName: String
    let eventId: String
    let start = SpanClock.now()

    init(job: DeliveryJob, destination: String, kindName: String) {
        trace = EventTrace(eventId: job.eventId)
        number = job.attempts.count + 1
        self.destination = destination
        self.kindName = kindName
        eventId = job.eventId
    }

    /// What the destination receives as `traceparent`: this attempt is the parent of
    /// whatever the receiver does with it.
    var traceparent: String { trace.traceparent(span: spanId) }

    /// The span, ended now with `outcome`: `delivered`, `retry` or `rejected` (the metric's
    /// label), the status code when there was one, an error status with the reason otherwise.
    func finished(_ outcome: AttemptOutcome) -> TraceSpan {
        let attempt = outcome.attempt
        var attributes: [(key: String, value: TraceSpan.Value)] = [
            ("storerelay.event.id", .string(eventId)),
            ("storerelay.destination", .string(destination)),
            ("storerelay.destination.kind", .string(kindName)),
            ("storerelay.attempt", .int(Int64(number))),
            ("storerelay.outcome", .string(outcome.metricLabel)),
        ]
        if let status = attempt.status { attributes.append(("http.response.status_code", .int(Int64(status)))) }
        let status: TraceSpan.Status = if case .delivered = outcome { .ok } else { .error(attempt.error ?? outcome.metricLabel) }
        // A webhook is a request answered; every other kind hands a message to a broker or a file.
        let kind: TraceSpan.Kind = kindName == "webhook" ? .client : .producer
        return TraceSpan(traceId: trace.traceId, spanId: spanId, parentSpanId: trace.receiveSpanId,
                         name: "deliver \(destination)", kind: kind, start: start, end: SpanClock.now(),
                         attributes: attributes, status: status)
    }
}
