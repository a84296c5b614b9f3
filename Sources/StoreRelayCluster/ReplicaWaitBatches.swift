import StoreRelayNet
import StoreRelayCore

/// One `WAITAOF` in flight per connection, serving every acknowledgement waiting there
/// (`ReplicaWait`). WAITAOF blocks its connection until it answers, so one per
/// acknowledgement, with K of them waiting, queued K waits one behind the other on the
/// connection every delivery shares, and made each acknowledgement wait for the others'.
///
/// A waiter joins once its write has been answered: a WAITAOF sent after that covers it (it
/// waits for every write its connection made before it). One whose write is answered while a
/// WAITAOF is out waits for the next, sent as soon as that one answers, for all who joined
/// meanwhile and those still short of the replicas before their deadline. Each WAITAOF waits
/// at most `ReplicaWait.slice`, less when the earliest deadline is nearer.
final class ReplicaWaitBatches: Sendable {
    struct Waiter: Sendable {
        /// Monotonic ns.
        var deadline: UInt64
        /// nil when the replicas have the write, else why not.
        var completion: @Sendable (String?) -> Void
    }

    private struct Batch {
        /// Covered by the WAITAOF out now.
        var waiting: [Waiter]
        /// Joined after it was sent: for the next one.
        var next: [Waiter] = []
    }

    let replicas: Int
    private let batches = Locked<[ObjectIdentifier: Batch]>([:])

    init(replicas: Int) {
        self.replicas = replicas
    }

    /// How many connections have a WAITAOF out now.
    var inFlight: Int { batches.current.count }

    /// Waits, on `session`'s connection, until the replicas have the writes it made so far
    /// (nil) or `deadline` (monotonic ns) passes (why not).
    func wait(on session: RedisSession, until deadline: UInt64, _ completion: @escaping @Sendable (String?) -> Void) {
        let waiter = Waiter(deadline: deadline, completion: completion)
        let send = batches.withLock { batches -> Bool in
            if batches[session.connectionID] != nil {
                batches[session.connectionID]?.next.append(waiter)
                return false
            }
            batches[session.connectionID] = Batch(waiting: [waiter])
            return true
        }
        if send { waitAOF(on: session, for: [waiter]) }
    }

    private func waitAOF(on session: RedisSession, for waiters: [Waiter]) {
        let now = MonotonicClock.nanoseconds()
        let earliest = waiters.map(\.deadline).min() ?? now
        let remaining = (Int64(earliest) - Int64(now)) / 1_000_000
        let slice = max(1, min(ReplicaWait.slice.wholeMilliseconds, remaining))
        session.send(RESPCommand("WAITAOF", "1", String(replicas), String(slice))) { [self] result in
            let shortfall = ReplicaWait.shortfall(result, replicas: replicas)
            // Only a count short of the replicas is worth asking again; an error is final.
            var again = false
            if shortfall != nil, case .success(let reply) = result, reply.errorKind == nil { again = true }
            let now = MonotonicClock.nanoseconds()
            var finished: [Waiter] = []
            var carried: [Waiter] = []
            for waiter in waiters {
                if again, now < waiter.deadline { carried.append(waiter) } else { finished.append(waiter) }
            }
            let next = batches.withLock { batches -> [Waiter] in
                let next = carried + (batches[session.connectionID]?.next ?? [])
                batches[session.connectionID] = next.isEmpty ? nil : Batch(waiting: next)
                return next
            }
            for waiter in finished { waiter.completion(shortfall) }
            if !next.isEmpty { waitAOF(on: session, for: next) }
        }
    }
}
