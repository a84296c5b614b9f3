import StoreRelayCore

/// Hooks for metrics: told of every attempt outcome and dead letter. Called on destination
/// queues; implementations must be quick and thread-safe.
public protocol DeliveryObserver: Sendable {
    /// `outcome` is `delivered`, `retry`, `exhausted` (failed, and the last the budget
    /// allowed) or `rejected`; `seconds` the attempt's duration. Every attempt is told once.
    func attemptFinished(destination: String, outcome: String, seconds: Double)
    func deadLettered(destination: String?, reason: DeadLetter.Reason)
    /// Cluster mode: `count` entries of `destination` another instance left idle were taken over.
    func entriesClaimed(destination: String, count: Int)
    /// Cluster mode: `count` entries of `destination` were found deleted while pending: events
    /// acknowledged to Apple that no instance can deliver any more (it must stay 0).
    func entriesLost(destination: String, count: Int)
    /// Cluster mode: a record of kind `record` (event, state, progress, letter, entry) failed
    /// its `cluster-key` check and was not acted on.
    func recordTampered(record: String)
    /// A delivery attempt finished: its span, for `tracing otlp` (`SpanExporter`).
    func traced(_ span: TraceSpan)
    /// `destination`'s breaker opened (`open` true, after failures while closed: a failed
    /// probe that keeps it open is not told again) or closed again; `error` is the last
    /// failure's. Called on the destination's queue, in both modes (`AttemptRunner`).
    func breakerChanged(destination: String, open: Bool, error: String?)
}

extension DeliveryObserver {
    public func entriesClaimed(destination: String, count: Int) {}
    public func entriesLost(destination: String, count: Int) {}
    public func recordTampered(record: String) {}
    public func traced(_ span: TraceSpan) {}
    public func breakerChanged(destination: String, open: Bool, error: String?) {}
}

/// Tells every observer of `observers` every callback. Each implements what it listens to
/// and the defaults above ignore the rest, so a listener never misses a callback because a
/// relay picking, method by method, whom to tell forgot it (the gateway's relay once dropped
/// every delivery span that way).
public struct DeliveryObservers: DeliveryObserver {
    let observers: [any DeliveryObserver]

    public init(_ observers: [any DeliveryObserver]) { self.observers = observers }

    public func attemptFinished(destination: String, outcome: String, seconds: Double) {
        for observer in observers { observer.attemptFinished(destination: destination, outcome: outcome, seconds: seconds) }
    }

    public func deadLettered(destination: String?, reason: DeadLetter.Reason) {
        for observer in observers { observer.deadLettered(destination: destination, reason: reason) }
    }

    public func entriesClaimed(destination: String, count: Int) {
        for observer in observers { observer.entriesClaimed(destination: destination, count: count) }
    }

    public func entriesLost(destination: String, count: Int) {
        for observer in observers { observer.entriesLost(destination: destination, count: count) }
    }

    public func recordTampered(record: String) {
        for observer in observers { observer.recordTampered(record: record) }
    }

    public func traced(_ span: TraceSpan) {
        for observer in observers { observer.traced(span) }
    }

    public func breakerChanged(destination: String, open: Bool, error: String?) {
        for observer in observers { observer.breakerChanged(destination: destination, open: open, error: error) }
    }
}

/// Observes nothing.
public struct NoDeliveryObserver: DeliveryObserver {
    public init() {}
    public func attemptFinished(destination: String, outcome: String, seconds: Double) {}
    public func deadLettered(destination: String?, reason: DeadLetter.Reason) {}
}
