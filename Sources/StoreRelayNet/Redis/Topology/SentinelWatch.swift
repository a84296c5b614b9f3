import Dispatch
import StoreRelayCore

/// Asks every sentinel, every `interval`, which primary it names, each on a connection kept
/// open for it (a client per sentinel, reconnecting on its own), and reports the tally of
/// each round. This is how a client refuses a primary the sentinels no longer name, even
/// one that still answers as a primary: after a failover the old primary stays `master`
/// for seconds, until a sentinel reconfigures it, and what it acknowledged meanwhile is lost
/// when it becomes a replica.
final class SentinelWatch: Sendable {
    private let sentinels: [RedisClient]
    private let name: String
    private let interval: Duration
    private let timer = RepeatingTimer()
    private let queue = DispatchQueue(label: "storerelay.redis.sentinel-watch", target: .deliveryWork)

    init(configuration: RedisConfiguration, sentinels: [HostPort], name: String) {
        self.sentinels = sentinels.map { sentinel in
            var asking = configuration
            asking.url = configuration.url.anonymous(at: sentinel)
            asking.topology = .standalone
            asking.connectionChecks = []
            asking.acceptConnection = nil
            asking.clientName = configuration.clientName.map { $0 + "-sentinel" }
            asking.connectTimeout = min(configuration.connectTimeout, .seconds(2))
            asking.commandTimeout = min(configuration.commandTimeout, .seconds(2))
            asking.reconnectMaximum = min(configuration.reconnectMaximum, .seconds(2))
            asking.logger = .disabled
            return RedisClient(configuration: asking)
        }
        self.name = name
        interval = configuration.sentinelCheckInterval
    }

    /// Connects to every sentinel and asks them each `interval`; `report` hears each round's
    /// verdict (on the client's callback queue).
    func start(report: @escaping @Sendable (SentinelTally.Verdict) -> Void) {
        for sentinel in sentinels { sentinel.start() }
        timer.start(after: interval, every: interval, leeway: .milliseconds(50), on: queue) { [weak self] in self?.round(report) }
    }

    func stop() {
        timer.stop()
        for sentinel in sentinels { sentinel.shutdown() }
    }

    /// One question to each connected sentinel; the verdict once all have answered or failed.
    private func round(_ report: @escaping @Sendable (SentinelTally.Verdict) -> Void) {
        let connected = sentinels.enumerated().filter { $0.element.isConnected }
        guard !connected.isEmpty else { return report(.noAnswer) }
        let tally = Locked<(answers: [HostPort??], pending: Int)>((Array(repeating: nil, count: sentinels.count), connected.count))
        for (index, sentinel) in connected {
            sentinel.send(RESPCommand("SENTINEL", "get-master-addr-by-name", name)) { result in
                let primary = Self.answer(result)
                let answers = tally.withLock { tally -> [HostPort??]? in
                    tally.answers[index] = primary
                    tally.pending -= 1
                    return tally.pending == 0 ? tally.answers : nil
                }
                if let answers { report(SentinelTally.verdict(answers)) }
            }
        }
    }

    /// A sentinel's answer: `.some(nil)` for "no such primary", nil for no usable answer.
    private static func answer(_ result: Result<RESPValue, RedisError>) -> HostPort?? {
        guard case .success(let reply) = result else { return nil }
        do {
            return .some(try SentinelReplies.primaryAddress(reply))
        } catch {
            return nil
        }
    }
}
