import Dispatch
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// Fans every journaled event out to the destinations its routes named, at least once, or
/// into the dead-letter store with the reason and every attempt (SPEC "Delivery to webhooks",
/// "File queues", "Journal and recovery").
///
/// Each destination's queue reads the journal from its own cursor, holding a bounded window of
/// events in memory, and keeps its place (`DestinationBook`, in its `BookKeeper`) itself; a
/// backlog waits in the journal, costing neither memory nor start-up time. Progress is written
/// to the journal next to the events, and a snapshot of every book is checkpointed about once
/// a second, so `kill -9` at any moment loses nothing: on start,
/// `resume` reads the checkpoint and replays the journal's tail after it. A journal segment
/// is retired once the checkpoint no longer needs it.
public final class DeliveryEngine: Sendable {
    /// What a reload can change, swapped as a whole.
    struct Topology: Sendable {
        var queues: [String: DestinationQueue]
        /// Destination names in configuration order, for status listings.
        var order: [String]
        var routes: RouteTable
    }

    let journal: Journal
    public let deadLetters: DeadLetterStore
    let topology: Locked<Topology>
    let clock: any TimeSource
    let logger: Logger
    let observer: any DeliveryObserver
    /// Delayed work (retirement, dead-letter retries, reloads) runs here.
    let queue = DispatchQueue(label: "storerelay.delivery")
    /// Every destination's cursor and window, and the router's pending letters.
    let books: Locked<DeliveryBooks>
    let checkpointFile: CheckpointFile
    /// Writes checkpoints (blocking I/O) one at a time.
    let checkpointQueue = DispatchQueue(label: "storerelay.delivery.checkpoint")
    let checkpointIntervalMilliseconds: Int
    let ledger: Locked<EventLedger>
    /// Every accepted event's summary and delivery states, on disk (`GET /api/events`);
    /// fed here, where the ledger is, and written off the acceptance path in batches.
    public let eventLog: EventLog?
    /// Reads parked and unfinished events back from the journal.
    let reader: ParkedEventReader
    /// Destinations read their backlogs from the journal here, one read at a time.
    let backlogQueue = DispatchQueue(label: "storerelay.delivery.backlog")
    /// Waiting jobs each destination keeps whole; beyond it they wait in the journal.
    let wholeJobsPerDestination: Int
    /// Events each destination holds taken at most (whole, parked by position, in flight);
    /// the rest of its backlog stays behind its cursor in the journal.
    let windowPerDestination: Int
    /// How long a parked event the journal could not give back waits before the next read.
    let readBackRetryDelay: Duration
    /// Outcomes being written down (progress records, dead letters): a stop waits for them,
    /// within its grace, before the journal closes.
    let bookkeeping = DispatchGroup()
    /// Dead letters being replayed, with the destinations still to finish.
    let replaying = Locked<[String: ReplayingLetter]>([:])
    /// Bulk replays recorded on disk, and the letters each still waits for.
    let intents: ReplayIntentStore
    let intentsWaiting = Locked<[String: Set<String>]>([:])
    /// Letters a bulk replay just adopted from a replay by hand (see `replay(deadLetterId:intent:force:)`).
    let adopted = Locked<Set<String>>([])
    let client: HTTPClient
    /// Reads a stored notification's Apple body again with the running build (set by the
    /// gateway): how a replay delivers a notification an older build could not read.
    public let reprocess = Locked<(@Sendable (StoredNotification) -> StoredNotification?)?>(nil)
    /// Lets destination queues, including those a reload builds, reach the engine without a
    /// retain cycle.
    let reference: EngineReference
    /// The destinations an operator paused, as last stored (`pausedFile`).
    let paused: Locked<Set<String>>
    let pausedFile: PausedDestinationsFile
    /// Pauses and resumes are stored one at a time (blocking I/O).
    let pauseQueue = DispatchQueue(label: "storerelay.delivery.pause")

    /// Opens every destination (file queues now, so a bad directory fails start-up).
    ///
    /// - Parameters:
    ///   - wholeJobsPerDestination: how many waiting jobs a destination keeps in memory with
    ///     their event (about 25 KB each); others in its window are parked (a few hundred
    ///     bytes) and read back when due.
    ///   - windowPerDestination: how many taken, unfinished events a destination holds; the
    ///     rest of its backlog is read from the journal as the window frees.
    ///   - checkpointPause: a test seam (see `CheckpointFile.pauseBeforeRename`).
    ///   - pausedFile: where the paused destinations are kept (`PausedDestinationsFile`);
    ///     nil: in memory only.
    public init(
        configuration: GatewayConfiguration, journal: Journal, deadLetters: DeadLetterStore,
        clock: any TimeSource = WallClock(), logger: Logger, observer: any DeliveryObserver = NoDeliveryObserver(),
        wholeJobsPerDestination: Int = 256, windowPerDestination: Int = 4096, readBackRetryDelay: Duration = .seconds(5),
        checkpointInterval: Duration = .seconds(1), checkpointPause: Duration? = nil, replayDirectory: String? = nil,
        pausedFile: String? = nil, eventLog: EventLog? = nil
    ) throws(DeliveryError) {
        self.eventLog = eventLog
        checkpointIntervalMilliseconds = max(1, Int(checkpointInterval.wholeMilliseconds))
        intents = try ReplayIntentStore(directory: replayDirectory, logger: logger)
        self.readBackRetryDelay = readBackRetryDelay
        ledger = Locked(EventLedger(capacity: configuration.recentEvents))
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.logger = logger
        client = HTTPClient(configuration: clientConfiguration)
        reference = EngineReference()
        self.journal = journal
        self.deadLetters = deadLetters
        self.clock = clock
        self.logger = logger
        self.observer = observer
        self.wholeJobsPerDestination = wholeJobsPerDestination
        self.windowPerDestination = max(wholeJobsPerDestination, windowPerDestination)
        reader = ParkedEventReader(journal: journal, logger: logger)
        self.pausedFile = PausedDestinationsFile(path: pausedFile, logger: logger)
        let paused = self.pausedFile.load()
        self.paused = Locked(paused)
        checkpointFile = CheckpointFile(directory: journal.directory, pauseBeforeRename: checkpointPause)
        var books = DeliveryBooks(router: RouterBook(reached: journal.endPosition))
        var queues: [String: DestinationQueue] = [:]
        for destination in configuration.destinations {
            // A placeholder until `resume` puts the checkpoint's book in it.
            let keeper = books.keeper(of: destination.name, startingAt: journal.endPosition)
            queues[destination.name] = try Self.makeQueue(
                destination, client: client, wholeJobLimit: wholeJobsPerDestination, window: self.windowPerDestination,
                clock: clock, logger: logger, observer: observer, keeper: keeper, events: reference.events,
                readBackRetryDelay: readBackRetryDelay, paused: paused.contains(destination.name))
        }
        self.books = Locked(books)
        topology = Locked(Topology(queues: queues, order: configuration.destinations.map(\.name), routes: configuration.routes))
        reference.engine = self
    }

    /// Deliveries still to finish: taken and unfinished, waiting in the journal behind a
    /// cursor (as counted), and dead letters not yet written.
    public var unfinishedEvents: Int {
        books.withLock { books in
            books.destinations.values.reduce(books.router.pending.count) { $0 + $1.unfinishedCount + $1.backlog }
        }
    }

    /// Status of every destination, in configuration order: what waits in its window, plus
    /// its backlog in the journal.
    public var status: [DestinationStatus] {
        let topology = topology.current
        let backlogs = books.withLock { $0.destinations }.mapValues(\.backlog)
        return topology.order.compactMap { name in
            guard var status = topology.queues[name]?.status else { return nil }
            let backlog = backlogs[name] ?? 0
            status.queueDepth += backlog
            status.parked += backlog
            return status
        }
    }

    /// Where the deliveries of event `id` stand, while the engine remembers it. An unfinished
    /// event is read back from the journal, which blocks: call it off the accepting pool.
    public func state(ofEvent id: String) -> EventDeliveryState? {
        guard let entry = ledger.withLock({ $0.entry(of: id) }) else { return stateFromDeadLetters(ofEvent: id) }
        if let summary = entry.summary { return EventDeliveryState(notification: summary, deliveries: entry.deliveries) }
        if let position = entry.position, let event = reader.readNow(position), event.id == id {
            return EventDeliveryState(notification: event, deliveries: entry.deliveries)
        }
        // It finished (and its segment may be gone) between the two looks: the ledger has it now.
        guard let entry = ledger.withLock({ $0.entry(of: id) }), let summary = entry.summary else { return nil }
        return EventDeliveryState(notification: summary, deliveries: entry.deliveries)
    }

    /// The events of one subscription the gateway can say something about: those in the window
    /// of recent events (and unfinished ones), and older ones that have dead letters; newest
    /// first, at most `limit`.
    public func events(ofSubscription originalTransactionId: String, limit: Int = 100) -> [EventDeliveryState] {
        var ids = ledger.withLock { $0.events(ofSubscription: originalTransactionId) }
        var cursor: String?
        repeat {
            let page = deadLetters.list(DeadLetterQuery(originalTransactionId: originalTransactionId), limit: 500, cursor: cursor)
            ids.formUnion(page.items.map(\.eventId))
            cursor = page.nextCursor
        } while cursor != nil
        let states = ids.compactMap { state(ofEvent: $0) }
            .sorted { ($0.notification.receivedAt.milliseconds, $0.notification.id) > ($1.notification.receivedAt.milliseconds, $1.notification.id) }
        return Array(states.prefix(limit))
    }

    /// An event the ledger no longer remembers (older than the window of recent events, or
    /// from before a restart): what its dead letters tell, with the event log's state of
    /// every other delivery (attempts are not kept there), if it has any dead letters.
    private func stateFromDeadLetters(ofEvent id: String) -> EventDeliveryState? {
        guard var state = EventDeliveryState(deadLetters: deadLetters.letters(forEvent: id), eventId: id) else { return nil }
        guard let summary = eventLog?.summaryNow(id: id) else { return state }
        let lettered = state.deliveries
        state.deliveries = summary.deliveries.map { delivery in
            lettered.first { $0.destination == delivery.destination }
                ?? EventDeliveryState.Delivery(destination: delivery.destination,
                                               phase: EventDeliveryState.Phase(rawValue: delivery.state.name) ?? .pending,
                                               attempts: [], nextAttempt: nil, deadLetterId: nil)
        }
        state.deliveries += lettered.filter { letter in !summary.deliveries.contains { $0.destination == letter.destination } }
        state.allDeliveriesKnown = true
        return state
    }

    /// Stops every destination; unfinished deliveries resume from the journal on the next
    /// start. A last checkpoint is written once the outcomes of the grace are recorded.
    public func stop(grace: Duration = .zero, completion: @escaping @Sendable () -> Void) {
        let deadline = DispatchTime.now().advanced(by: grace)
        books.withLock { $0.stopping = true }
        let group = DispatchGroup()
        for queue in topology.current.queues.values {
            group.enter()
            queue.stop(grace: grace) { group.leave() }
        }
        group.notify(queue: queue) { [client, bookkeeping] in
            // The outcomes recorded during the grace are written before the journal closes
            // (waiting blocks: not on a pool that deliveries need).
            DispatchQueue.global(qos: .utility).async {
                _ = bookkeeping.wait(timeout: deadline)
                client.shutdown()
                self.checkpointQueue.async {
                    self.writeCheckpoint()
                    completion()
                }
            }
        }
    }

    func queue(named name: String) -> DestinationQueue? { topology.current.queues[name] }

    static func makeQueue(
        _ destination: DestinationConfiguration, client: HTTPClient, wholeJobLimit: Int, window: Int, clock: any TimeSource,
        logger: Logger, observer: any DeliveryObserver, keeper: BookKeeper, events: DestinationQueue.Events,
        readBackRetryDelay: Duration, paused: Bool
    ) throws(DeliveryError) -> DestinationQueue {
        let setup = try DestinationSetup(destination, client: client, clock: clock, logger: logger)
        let queue = DestinationQueue(definition: destination, setup: setup, wholeJobLimit: wholeJobLimit, window: window, clock: clock,
                                     observer: observer, logger: logger, keeper: keeper, events: events,
                                     readBackRetryDelay: readBackRetryDelay)
        // Before `start` (queued first on the queue's own serial queue): it reads nothing.
        if paused { queue.setPaused(true) }
        return queue
    }
}

/// Lets destination queues reach the engine that owns them without a retain cycle.
final class EngineReference: @unchecked Sendable {
    // Written once, at the end of the engine's init, before any queue can report.
    weak var engine: DeliveryEngine?

    /// What every destination queue reports to the engine.
    var events: DestinationQueue.Events {
        DestinationQueue.Events(
            attempted: { [self] job, attempt in engine?.recordAttempt(job, attempt) },
            delivered: { [self] job in engine?.recordDelivery(job) },
            deadLettered: { [self] job, reason, detail in engine?.deadLetter(job, reason: reason, detail: detail) },
            readBack: { [self] parked, completion in
                guard let engine else { return completion(nil) }
                engine.reader.read(parked.position) { event in
                    // A position names one record; anything else there is a bug, not an event to send.
                    completion(event?.id == parked.eventId ? event : nil)
                }
            },
            unreadable: { [self] parked in engine?.deadLetterUnreadable(parked) },
            readBacklog: { [self] name, cursor, room, completion in
                guard let engine else { return completion(BacklogRead(jobs: [], next: cursor, atEnd: false, failed: true)) }
                engine.readBacklog(of: name, from: cursor, room: room, completion: completion)
            })
    }
}
