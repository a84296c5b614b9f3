import Dispatch
import StoreRelayConfig
import StoreRelayCore

extension DeliveryEngine {
    /// Applies a reloaded configuration: new routes for new events; destinations whose
    /// definition is unchanged keep their queue, connections and waiting events; a redefined
    /// destination gets a new queue and takes over the old one's events; a removed one
    /// dead-letters what it held (`unrouted`, so a replay routes it again).
    ///
    /// Blocks until retired queues are closed (a redefined file queue must close before it
    /// reopens the same directory): call it off every request path.
    public func reconfigure(_ configuration: GatewayConfiguration) throws {
        let current = topology.current
        var queues: [String: DestinationQueue] = [:]
        var retiring: [(old: DestinationQueue, replacement: DestinationConfiguration?)] = []
        for definition in configuration.destinations {
            if let existing = current.queues[definition.name] {
                if existing.definition == definition {
                    queues[definition.name] = existing
                    continue
                }
                retiring.append((existing, definition))
            }
        }
        for (name, queue) in current.queues where !configuration.destinations.contains(where: { $0.name == name }) {
            retiring.append((queue, nil))
        }
        // Retire first so a redefined file queue's directory is free before it opens again.
        var handedOver: [String: Locked<[WaitingJob]>] = [:]
        let group = DispatchGroup()
        for (old, replacement) in retiring {
            let jobs = Locked<[WaitingJob]>([])
            handedOver[old.name] = jobs
            group.enter()
            old.retire(handOff: { [self] job in
                if replacement != nil {
                    jobs.withLock { $0.append(job) }
                } else {
                    deadLetter(job, reason: .unrouted, detail: "destination \(old.name) was removed from the configuration")
                }
            }, completion: { group.leave() })
        }
        group.wait()
        for definition in configuration.destinations where queues[definition.name] == nil {
            queues[definition.name] = try Self.makeQueue(definition, client: client, wholeJobLimit: wholeJobsPerDestination,
                                                         clock: clock, logger: logger, events: reference.events,
                                                         readBackRetryDelay: readBackRetryDelay)
        }
        topology.withLock {
            $0 = Topology(queues: queues, order: configuration.destinations.map(\.name), routes: configuration.routes)
        }
        // Events that waited in a redefined destination carry on in its new queue.
        for (name, jobs) in handedOver {
            guard let queue = queues[name] else { continue }
            for job in jobs.current { queue.takeOver(job) }
        }
        logger.info("destinations reconfigured", [
            ("destinations", String(queues.count)), ("replaced.or.removed", String(retiring.count)),
        ])
    }
}
