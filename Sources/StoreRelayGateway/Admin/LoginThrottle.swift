import StoreRelayCore

/// Failed authentications counted per client (a wrong token at `/login`, or a wrong bearer
/// token; `AdminClientAddress` says who the client is): after a few, that client's requests
/// without the right token are refused with 429 for a while, neither counted nor logged. The
/// pause doubles with each further failure, up to `maximumPause`; a login forgets the client.
///
/// The right token is never refused (the handler compares it first): a pause must not lock
/// the operator out because someone at the same address keeps failing. So a pause does not
/// stop guessing; a 32-character token does. What the pause bounds is the noise: a client
/// stuck on a wrong token gets 429 and one log line per pause, not one per request.
final class LoginThrottle: Sendable {
    /// What one address did lately.
    private struct Record {
        var failures = 0
        var blockedUntil: Timestamp?
        var lastFailure: Timestamp
    }

    /// Failures allowed before the first pause.
    static let allowedFailures = 5
    static let firstPause: Duration = .seconds(1)
    static let maximumPause: Duration = .seconds(300)
    /// Addresses remembered at most; beyond it the ones quiet longest are forgotten, so a
    /// flood of addresses costs bounded memory.
    static let maximumAddresses = 4_096

    private let records = Locked<[String: Record]>([:])
    private let clock: any TimeSource

    init(clock: any TimeSource) { self.clock = clock }

    /// How long `address` must still wait before trying again; nil when it may try now.
    func pause(for address: String) -> Duration? {
        let now = clock.now()
        return records.withLock { records in
            guard let until = records[address]?.blockedUntil, until > now else { return nil }
            return .milliseconds(until.milliseconds - now.milliseconds)
        }
    }

    /// Counts a failure; returns the pause it starts, if any.
    @discardableResult
    func recordFailure(from address: String) -> Duration? {
        let now = clock.now()
        return records.withLock { records in
            if records[address] == nil, records.count >= Self.maximumAddresses {
                let quiet = records.sorted { $0.value.lastFailure < $1.value.lastFailure }.prefix(Self.maximumAddresses / 4)
                for (key, _) in quiet { records[key] = nil }
            }
            var record = records[address] ?? Record(lastFailure: now)
            record.failures += 1
            record.lastFailure = now
            var pause: Duration?
            if record.failures >= Self.allowedFailures {
                let doublings = min(record.failures - Self.allowedFailures, 16)
                let length = min(Self.firstPause.wholeMilliseconds << Int64(doublings), Self.maximumPause.wholeMilliseconds)
                record.blockedUntil = Timestamp(milliseconds: now.milliseconds + length)
                pause = .milliseconds(length)
            }
            records[address] = record
            return pause
        }
    }

    /// Addresses remembered now (for tests of the bound).
    var addressCount: Int { records.withLock { $0.count } }

    func recordSuccess(from address: String) {
        _ = records.withLock { $0.removeValue(forKey: address) }
    }
}
