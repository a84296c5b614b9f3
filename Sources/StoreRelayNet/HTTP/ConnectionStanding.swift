import Dispatch

/// Where a connection stands when the server must close one to make room at a connection
/// limit. Each connection publishes its own (nil while it owes an answer: such a connection
/// is never closed to make room); the server compares them on its accept queue.
struct ConnectionStanding: Sendable, Equatable {
    /// Nothing in progress: between requests, nothing sent yet, or lingering after its last
    /// answer. Only these make room at the per-address limit.
    var isIdle: Bool

    /// The instant up to which the connection has earned its place; the earliest gives way
    /// first. For an idle connection, when it went idle; for one sending a request, when that
    /// request began (the accept, for the first one) plus one second per `creditRate` bytes
    /// of it received. So a connection open long with few bytes to show for it goes before a
    /// trickler that started later, and a client that has only just connected goes last.
    var earnedUntil: DispatchTime

    /// A connection sending a request since `started`, with `bytes` of it received.
    static func receiving(since started: DispatchTime, bytes: Int, creditRate: Int) -> ConnectionStanding {
        ConnectionStanding(isIdle: false, earnedUntil: started.advanced(byTransferOf: bytes, atRate: creditRate))
    }
}

extension DispatchTime {
    /// This time moved later by how long `bytes` take at `rate` bytes per second (saturating;
    /// not moved when `rate` is 0).
    func advanced(byTransferOf bytes: Int, atRate rate: Int) -> DispatchTime {
        guard rate > 0 else { return self }
        let (scaled, overflow) = UInt64(max(0, bytes)).multipliedReportingOverflow(by: 1_000_000_000)
        let nanoseconds = overflow ? UInt64.max : scaled / UInt64(rate)
        let (sum, late) = uptimeNanoseconds.addingReportingOverflow(nanoseconds)
        return DispatchTime(uptimeNanoseconds: late ? .max : sum)
    }
}
