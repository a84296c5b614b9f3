import StoreRelayDelivery

/// What the delivery engine tells, told to both listeners: the metrics and the operational
/// events. The engine takes one observer; a pair keeps each listener ignorant of the other.
/// Every requirement is forwarded here: the protocol's empty defaults (for tests' doubles)
/// would otherwise swallow one silently.
struct GatewayObserver: DeliveryObserver {
    let metrics: GatewayMetrics
    let operational: OperationalEvents

    func attemptFinished(destination: String, outcome: String, seconds: Double) {
        metrics.attemptFinished(destination: destination, outcome: outcome, seconds: seconds)
    }

    func deadLettered(destination: String?, reason: DeadLetter.Reason) {
        metrics.deadLettered(destination: destination, reason: reason)
        operational.deadLettered(destination: destination, reason: reason)
    }

    func entriesClaimed(destination: String, count: Int) {
        metrics.entriesClaimed(destination: destination, count: count)
    }

    func entriesLost(destination: String, count: Int) {
        metrics.entriesLost(destination: destination, count: count)
    }

    func recordTampered(record: String) {
        metrics.recordTampered(record: record)
        operational.recordTampered(record: record)
    }

    func breakerChanged(destination: String, open: Bool, error: String?) {
        operational.breakerChanged(destination: destination, open: open, error: error)
    }

    func traced(_ span: TraceSpan) {
        metrics.traced(span)
    }
}
