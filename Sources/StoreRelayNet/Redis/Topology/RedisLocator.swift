import StoreRelayCore

/// Finds the node a `RedisClient` connects to next, by its topology (docs/SPEC.md "Cluster
/// mode", Topologies):
/// - one server: the URL's host, at once;
/// - a cluster: the first node that answers `CLUSTER SHARDS` (or, where that is unknown,
///   `CLUSTER SLOTS`) names the primary serving the slot of `slotKey`. Asked in order: the
///   node the last MOVED named, the seeds, then the primaries the last slot map listed (so
///   the seeds may all be gone once the client has seen the cluster);
/// - Sentinel: every sentinel is asked `SENTINEL get-master-addr-by-name` at once, and the
///   primary most of those that answer name is the one (`SentinelTally`).
///
/// Every question runs on a short connection of its own (`RedisProbe`), one node after the
/// other; nothing blocks. The client checks what it connects to (`ROLE`) before using it.
final class RedisLocator: Sendable {
    private let configuration: RedisConfiguration
    private let connector: OutboundConnector
    private let slot: Int

    private struct Memory {
        /// The node a MOVED named: tried first, once.
        var movedTo: HostPort?
        /// Primaries of the last slot map.
        var knownNodes: [HostPort] = []
    }
    private let memory = Locked(Memory())

    init(configuration: RedisConfiguration, connector: OutboundConnector) {
        self.configuration = configuration
        self.connector = connector
        slot = RedisHashSlot.of(configuration.slotKey)
    }

    /// The node to connect to; nil for a single server (the URL's own host).
    func locate(completion: @escaping @Sendable (Result<HostPort?, RedisError>) -> Void) {
        switch configuration.topology {
        case .standalone:
            completion(.success(nil))
        case .cluster(let seeds):
            let candidates = memory.withLock { memory -> [HostPort] in
                defer { memory.movedTo = nil }
                return Self.unique((memory.movedTo.map { [$0] } ?? []) + seeds + memory.knownNodes)
            }
            askCluster(candidates[...], failures: []) { completion($0.map(Optional.some)) }
        case .sentinel(let sentinels, let name):
            askSentinels(sentinels, name: name) { completion($0.map(Optional.some)) }
        }
    }

    /// A MOVED reply named `node`: the next location asks it first.
    func moved(to node: HostPort) {
        memory.withLock { $0.movedTo = node }
    }

    // MARK: Cluster

    private func askCluster(_ candidates: ArraySlice<HostPort>, failures: [String],
                            completion: @escaping @Sendable (Result<HostPort, RedisError>) -> Void) {
        guard let node = candidates.first else {
            return completion(.failure(RedisError(.unavailable, "no cluster node named the primary of slot \(slot): "
                + failures.joined(separator: "; "))))
        }
        let commands = [RESPCommand("CLUSTER", "SHARDS"), RESPCommand("CLUSTER", "SLOTS")]
        RedisProbe.ask(configuration.url.at(node), commands, like: configuration, connector: connector) { [self] result in
            switch result.flatMap({ replies in slotMap(replies, askedAt: node) }) {
            case .success(let map):
                memory.withLock { $0.knownNodes = Self.unique(map.ranges.compactMap(\.host)) }
                if let primary = map.primary(of: slot, askedAt: node) { return completion(.success(primary)) }
                askCluster(candidates.dropFirst(), failures: failures + ["\(node) knows no primary of slot \(slot)"], completion: completion)
            case .failure(let error):
                askCluster(candidates.dropFirst(), failures: failures + ["\(node): \(error.message)"], completion: completion)
            }
        }
    }

    /// `CLUSTER SHARDS`'s map, or `CLUSTER SLOTS`'s where the server does not know SHARDS
    /// (Redis before 7.0, services that rename it).
    private func slotMap(_ replies: [RESPValue], askedAt node: HostPort) -> Result<ClusterSlotMap, RedisError> {
        do throws(TopologyReplyError) {
            if let map = try? ClusterSlotMap.shards(replies[0], usesTLS: configuration.url.usesTLS), !map.ranges.isEmpty {
                return .success(map)
            }
            return .success(try ClusterSlotMap.slots(replies[1]))
        } catch {
            return .failure(RedisError(.unavailable, error.description))
        }
    }

    // MARK: Sentinel

    /// Asks every sentinel at once; the verdict counts the answers (`SentinelTally`).
    private func askSentinels(_ sentinels: [HostPort], name: String, completion: @escaping @Sendable (Result<HostPort, RedisError>) -> Void) {
        let answers = Locked<(answers: [HostPort??], failures: [String], pending: Int)>(
            (Array(repeating: nil, count: sentinels.count), [], sentinels.count))
        for (index, sentinel) in sentinels.enumerated() {
            askSentinel(sentinel, name: name) { result in
                let done = answers.withLock { tally -> (answers: [HostPort??], failures: [String])? in
                    switch result {
                    case .success(let primary): tally.answers[index] = .some(primary)
                    case .failure(let error): tally.failures.append("\(sentinel): \(error.message)")
                    }
                    tally.pending -= 1
                    return tally.pending == 0 ? (tally.answers, tally.failures) : nil
                }
                guard let done else { return }
                switch SentinelTally.verdict(done.answers) {
                case .primary(let primary):
                    completion(.success(primary))
                case .unknown:
                    completion(.failure(RedisError(.unavailable, "the sentinels monitor no primary named '\(name)'")))
                case .noAnswer:
                    completion(.failure(RedisError(.unavailable, "no sentinel answered for '\(name)': " + done.failures.joined(separator: "; "))))
                }
            }
        }
    }

    /// One sentinel's answer: the primary it names, nil when it monitors none of that name.
    func askSentinel(_ sentinel: HostPort, name: String, completion: @escaping @Sendable (Result<HostPort?, RedisError>) -> Void) {
        let question = RESPCommand("SENTINEL", "get-master-addr-by-name", name)
        RedisProbe.ask(configuration.url.anonymous(at: sentinel), [question], like: configuration, connector: connector) { result in
            completion(result.flatMap { replies in
                do throws(TopologyReplyError) {
                    return .success(try SentinelReplies.primaryAddress(replies[0]))
                } catch {
                    return .failure(RedisError(.unavailable, error.description))
                }
            })
        }
    }

    private static func unique(_ nodes: [HostPort]) -> [HostPort] {
        var seen = Set<HostPort>()
        return nodes.filter { seen.insert($0).inserted }
    }
}
