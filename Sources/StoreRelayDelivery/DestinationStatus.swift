import StoreRelayCore

/// A point-in-time view of one destination, for status pages and metrics.
public struct DestinationStatus: Sendable {
    public var name: String
    public var kind: String
    public var queueDepth: Int
    /// Of `queueDepth`, the events waiting in the journal rather than in memory.
    public var parked: Int
    public var inFlight: Int
    public var breaker: CircuitBreaker.State
    public var lastSuccess: Timestamp?
    public var lastError: String?
    public var lastErrorAt: Timestamp?
    /// Paused by an operator: no attempt starts, the backlog waits (SPEC "Delivery controls").
    public var paused: Bool
    /// When the budget of the event that has waited longest for this destination started (its
    /// acceptance, or a replay); nil when nothing waits, or the mode reports it elsewhere
    /// (cluster mode: the server's figures).
    public var oldestPendingSince: Timestamp?

    public init(name: String, kind: String, queueDepth: Int, parked: Int, inFlight: Int, breaker: CircuitBreaker.State,
                lastSuccess: Timestamp?, lastError: String?, lastErrorAt: Timestamp?, paused: Bool = false) {
        self.name = name
        self.kind = kind
        self.queueDepth = queueDepth
        self.parked = parked
        self.inFlight = inFlight
        self.breaker = breaker
        self.lastSuccess = lastSuccess
        self.lastError = lastError
        self.lastErrorAt = lastErrorAt
        self.paused = paused
    }
}
