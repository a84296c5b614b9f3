import StoreRelayCore

/// A clock the test moves by hand, from a fixed instant (2027-01-15T08:00:00Z) unless told
/// otherwise: the one every suite uses for expiry, rotation and retry times.
public final class ManualClock: TimeSource {
    private let time: Locked<Timestamp>

    public init(_ start: Timestamp = Timestamp(milliseconds: 1_800_000_000_000)) {
        time = Locked(start)
    }

    public func now() -> Timestamp { time.current }

    public func advance(by duration: Duration) {
        let (seconds, attoseconds) = duration.components
        time.withLock { $0.milliseconds += seconds * 1000 + attoseconds / 1_000_000_000_000_000 }
    }
}
