import StoreRelayCore

/// Hooks for metrics: told of every attempt outcome and dead letter. Called on destination
/// queues; implementations must be quick and thread-safe.
public protocol DeliveryObserver: Sendable {
    /// `outcome` is `delivered`, `retry` or `rejected`; `seconds` the attempt's duration.
    func attemptFinished(destination: String, outcome: String, seconds: Double)
    func deadLettered(destination: String?, reason: DeadLetter.Reason)
}

/// Observes nothing.
public struct NoDeliveryObserver: DeliveryObserver {
    public init() {}
    public func attemptFinished(destination: String, outcome: String, seconds: Double) {}
    public func deadLettered(destination: String?, reason: DeadLetter.Reason) {}
}
