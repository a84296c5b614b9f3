import Dispatch
import StoreRelayConfig
import StoreRelayCore

extension DeliveryEngine {
    /// Applies a reloaded configuration: new routes for new events; destinations whose
    /// definition is unchanged keep their queue, connections and waiting events; a redefined
    /// destination gets a new queue and takes over the old one's events; a removed one
    /// dead-letters what it held (`unrouted`, so a replay routes it again).
    ///
    /// `completion` runs once retired queues are closed and the new ones started (a redefined
    /// file queue must close before it reopens the same directory), on the engine's queue;
    /// it gets the error when a new or redefined destination cannot be opened.
    public func reconfigure(_ configuration: GatewayConfiguration, completion: @escaping @Sendable (DeliveryError?) -> Void) {
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
        group.notify(queue: queue) { [self, queues, retiring, handedOver] in
            do throws(DeliveryError) {
                try apply(configuration, keeping: queues, replacing: current, retiring: retiring, handedOver: handedOver)
                completion(nil)
            } catch {
                completion(error)
            }
        }
    }

    /// The second half of `reconfigure`, once the retired queues are closed.
    private func apply(
        _ configuration: GatewayConfiguration, keeping kept: [String: DestinationQueue], replacing current: Topology,
        retiring: [(old: DestinationQueue, replacement: DestinationConfiguration?)], handedOver: [String: Locked<[WaitingJob]>]
    ) throws(DeliveryError) {
        var queues = kept
        // New and redefined destinations read on from their cursor: a new one from the
        // journal's end before the new routes apply (no event before it names it); events
        // that waited in a redefined destination carry on in its new queue, with its keeper.
        // A removed one dead-letters its backlog.
        let end = journal.endPosition
        for definition in configuration.destinations where queues[definition.name] == nil {
            let keeper = books.withLock { $0.keeper(of: definition.name, startingAt: end) }
            queues[definition.name] = try Self.makeQueue(definition, client: client, wholeJobLimit: wholeJobsPerDestination,
                                                         window: windowPerDestination, clock: clock, logger: logger,
                                                         observer: observer, keeper: keeper, events: reference.events,
                                                         readBackRetryDelay: readBackRetryDelay,
                                                         paused: paused.current.contains(definition.name))
        }
        topology.withLock {
            $0 = Topology(queues: queues, order: configuration.destinations.map(\.name), routes: configuration.routes)
        }
        let resumed = books.withLock { $0.resumed }
        for (name, queue) in queues where resumed && (current.queues[name] == nil || handedOver[name] != nil) {
            queue.start(cursor: queue.keeper.cursor, unfinished: [])
            for job in handedOver[name]?.current ?? [] { queue.takeOver(job) }
        }
        for (old, replacement) in retiring where replacement == nil && resumed {
            drainRemoved(old.name, detail: "destination \(old.name) was removed from the configuration")
        }
        logger.info("destinations reconfigured", [
            ("destinations", queues.count), ("replaced.or.removed", retiring.count),
        ])
    }
}
