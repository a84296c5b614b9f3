/// Which primary the sentinels name, from the answers of those that answered: the address
/// most of them name (ties: the one the earliest-listed sentinel names). During a failover
/// the sentinels disagree for a moment (the leader switches first, the others learn it from
/// its hello messages); counting keeps one stale sentinel from sending the client back to a
/// demoted primary.
struct SentinelTally: Sendable, Equatable {
    enum Verdict: Sendable, Equatable {
        /// The primary to use.
        case primary(HostPort)
        /// Most answering sentinels monitor no primary of that name (removed, never added).
        case unknown
        /// No sentinel answered.
        case noAnswer
    }

    /// One answer per sentinel, in the configuration's order: nil when it did not answer,
    /// `.some(nil)` when it answered that it knows no such primary.
    static func verdict(_ answers: [HostPort??]) -> Verdict {
        var counts: [HostPort?: Int] = [:]
        var order: [HostPort?] = []
        for case let answer? in answers {
            if counts[answer] == nil { order.append(answer) }
            counts[answer, default: 0] += 1
        }
        guard var best = order.first else { return .noAnswer }
        for answer in order.dropFirst() where counts[answer, default: 0] > counts[best, default: 0] {
            best = answer  // strictly more: a tie keeps the earlier one
        }
        return best.map(Verdict.primary) ?? .unknown
    }
}
