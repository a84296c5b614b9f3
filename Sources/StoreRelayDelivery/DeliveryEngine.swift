import Dispatch
import StoreRelayConfig
import StoreRelayStorage
import StoreRelayNet
import StoreRelayCore

/// Fans every journaled event out to the destinations its routes named, at least once, or
/// into the dead-letter store with the reason and every attempt (SPEC "Delivery to webhooks",
/// "File queues", "Journal and recovery").
///
/// Progress is written to the journal next to the events, so `kill -9` at any moment loses
/// nothing: on start, `resume` replays events and progress and picks up every unfinished
/// delivery where it stood. A journal segment is retired once every event in it is finished.
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
    let tracker = Locked(EventTracker())
    let ledger: Locked<EventLedger>
    /// Reads parked and unfinished events back from the journal.
    let reader: ParkedEventReader
    /// Waiting jobs each destination keeps whole; beyond it they wait in the journal.
    let wholeJobsPerDestination: Int
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
    /// Letters a bulk replay just adopted from a replay by hand (see `replay(deadLetterId:intent:)`).
    let adopted = Locked<Set<String>>([])
    let client: HTTPClient
    /// Reads a stored notification's Apple body again with the running build (set by the
    /// gateway): how a replay delivers a notification an older build could not read.
    public let reprocess = Locked<(@Sendable (StoredNotification) -> StoredNotification?)?>(nil)
    /// Lets destination queues, including those a reload builds, reach the engine without a
    /// retain cycle.
    let reference: EngineReference

    /// Opens every destination (file queues now, so a bad directory fails start-up).
    ///
    /// - Parameter wholeJobsPerDestination: how many waiting jobs a destination keeps in memory
    ///   with their event (about 25 KB each); the rest of a backlog waits in the journal, at a
    ///   few hundred bytes per event, and is read back when due.
    public init(
        configuration: GatewayConfiguration, journal: Journal, deadLetters: DeadLetterStore,
        clock: any TimeSource = WallClock(), logger: Logger, observer: any DeliveryObserver = NoDeliveryObserver(),
        wholeJobsPerDestination: Int = 256, readBackRetryDelay: Duration = .seconds(5), replayDirectory: String? = nil
    ) throws {
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
        reader = ParkedEventReader(journal: journal, logger: logger)
        var queues: [String: DestinationQueue] = [:]
        for destination in configuration.destinations {
            queues[destination.name] = try Self.makeQueue(
                destination, client: client, wholeJobLimit: wholeJobsPerDestination, clock: clock, logger: logger,
                events: reference.events, readBackRetryDelay: readBackRetryDelay)
        }
        topology = Locked(Topology(queues: queues, order: configuration.destinations.map(\.name), routes: configuration.routes))
        reference.engine = self
    }

    /// Delivers a notification the journal just stored at `position`.
    public func submit(_ notification: StoredNotification, position: RecordPosition) {
        start(notification, position: position, progress: [:])
    }

    /// Accepted events with a delivery still to finish (waiting, in flight or retrying).
    public var unfinishedEvents: Int { tracker.withLock { $0.unfinishedCount } }

    /// Status of every destination, in configuration order.
    public var status: [DestinationStatus] {
        let topology = topology.current
        return topology.order.compactMap { topology.queues[$0]?.status }
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

    /// An event the ledger no longer remembers (older than the window of recent events): what
    /// its dead letters tell, if it has any.
    private func stateFromDeadLetters(ofEvent id: String) -> EventDeliveryState? {
        EventDeliveryState(deadLetters: deadLetters.letters(forEvent: id))
    }

    /// Stops every destination; unfinished deliveries resume from the journal on the next start.
    public func stop(grace: Duration = .zero, completion: @escaping @Sendable () -> Void) {
        let deadline = DispatchTime.now().advanced(by: grace)
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
                completion()
            }
        }
    }

    func queue(named name: String) -> DestinationQueue? { topology.current.queues[name] }

    static func makeQueue(
        _ destination: DestinationConfiguration, client: HTTPClient, wholeJobLimit: Int, clock: any TimeSource, logger: Logger,
        events: DestinationQueue.Events, readBackRetryDelay: Duration
    ) throws -> DestinationQueue {
        let setup = try DestinationSetup(destination, client: client, clock: clock, logger: logger)
        return DestinationQueue(definition: destination, kind: setup.kind, driver: setup.driver, limits: setup.limits,
                                wholeJobLimit: wholeJobLimit, clock: clock, events: events, readBackRetryDelay: readBackRetryDelay)
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
            unreadable: { [self] parked in engine?.deadLetterUnreadable(parked) })
    }
}
