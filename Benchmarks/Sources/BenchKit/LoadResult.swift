/// What one load-generator run measured. Times are monotonic nanoseconds; a request never sent
/// has send time 0, one never answered has answer time 0.
public struct LoadResult {
    public var start: UInt64 = 0
    /// The last answer.
    public var end: UInt64 = 0
    public var sent = 0
    public var ok = 0
    public var duplicates = 0
    public var failed = 0
    public var connectionErrors = 0
    public var unanswered = 0
    /// The requests ran out before the time did: the corpus was too small for this rate.
    public var exhausted = false
    public var statuses: [Int: Int] = [:]
    public var firstFailure: String?
    public var sendTimes: [UInt64] = []
    public var answerTimes: [UInt64] = []

    /// Acknowledged requests per second, between the first send and the last answer.
    public var throughput: Double {
        guard end > start else { return 0 }
        return Double(ok + duplicates) / (Double(end - start) / 1e9)
    }

    /// Latency from send (or due) time to answer, for every answered request.
    public var latencies: LatencySummary {
        var samples: [UInt64] = []
        samples.reserveCapacity(sent)
        for index in 0..<sendTimes.count where sendTimes[index] != 0 && answerTimes[index] != 0 {
            samples.append(answerTimes[index] - sendTimes[index])
        }
        return LatencySummary(samples)
    }

    /// Statuses as `200×1234 503×2`.
    public var statusText: String {
        statuses.sorted { $0.key < $1.key }.map { "\($0.key)×\($0.value)" }.joined(separator: " ")
    }
}
