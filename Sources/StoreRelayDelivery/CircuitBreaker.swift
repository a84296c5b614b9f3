import StoreRelayCore

/// A destination's circuit breaker: after `threshold` consecutive failed attempts it opens and
/// no attempt is made until its cooldown ends; then one probe goes out (half-open); a success
/// closes it, a failure opens it again for a longer cooldown.
///
/// A pure state machine with injected time: a destination's `AttemptRunner` asks it before
/// each attempt and tells it every outcome, in single-node and cluster mode alike.
public struct CircuitBreaker: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case closed, open, halfOpen = "half-open"
    }

    public private(set) var state: State = .closed
    public private(set) var consecutiveFailures = 0
    /// While open: when the next probe may go out.
    public private(set) var openUntil: Timestamp?
    private var probeInFlight = false
    public let threshold: Int
    private let cooldown: RetrySchedule

    public init(threshold: Int = 5, cooldown: RetrySchedule) {
        self.threshold = max(1, threshold)
        self.cooldown = cooldown
    }

    /// Whether an attempt may start at `now`; in half-open state only one (the probe) may.
    public mutating func allowsAttempt(at now: Timestamp) -> Bool {
        switch state {
        case .closed:
            return true
        case .open:
            guard let until = openUntil, now >= until else { return false }
            state = .halfOpen
            probeInFlight = true
            return true
        case .halfOpen:
            if probeInFlight { return false }
            probeInFlight = true
            return true
        }
    }

    public mutating func recordSuccess() {
        state = .closed
        consecutiveFailures = 0
        openUntil = nil
        probeInFlight = false
    }

    public mutating func recordFailure(at now: Timestamp) {
        consecutiveFailures += 1
        probeInFlight = false
        if state == .halfOpen || consecutiveFailures >= threshold {
            state = .open
            let failuresOpen = consecutiveFailures - threshold + 1
            openUntil = now.advanced(by: cooldown.delay(afterFailures: failuresOpen))
        }
    }

    /// The probe allowed did not go out after all (cluster mode: nothing was waiting).
    public mutating func cancelProbe() { probeInFlight = false }

    /// A rejected (4xx) answer proves the destination is up: it resets the failure count.
    public mutating func recordAnswer() { recordSuccess() }
}
