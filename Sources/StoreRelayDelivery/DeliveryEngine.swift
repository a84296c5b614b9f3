import Dispatch
import StoreRelayConfig
import StoreRelayFileQueue
import StoreRelayHTTPClient
import StoreRelayJournal
import StoreRelaySupport

/// Fans every journaled event out to the destinations its routes named, at least once, or
/// into the dead-letter store with the reason and every attempt (SPEC "Delivery to webhooks",
/// "File queues", "Journal and recovery").
///
/// Progress is written to the journal next to the events, so `kill -9` at any moment loses
/// nothing: on start, `resume` replays events and progress and picks up every unfinished
/// delivery where it stood. A journal segment is retired once every event in it is finished.
public final class DeliveryEngine: Sendable {
    let journal: Journal
    public let deadLetters: DeadLetterStore
    let destinations: [String: DestinationQueue]
    /// Destination names in configuration order, for status listings.
    let destinationOrder: [String]
    let clock: any Clock
    let logger: Logger
    /// Event bookkeeping and segment retirement, confined to this queue.
    let queue = DispatchQueue(label: "storerelay.delivery")
    let tracker: Locked<EventTracker>
    private let client: HTTPClient

    /// Opens every destination (file queues now, so a bad directory fails start-up).
    public init(
        configuration: GatewayConfiguration, journal: Journal, deadLetters: DeadLetterStore,
        clock: any Clock = WallClock(), logger: Logger
    ) throws {
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.logger = logger
        let client = HTTPClient(configuration: clientConfiguration)
        // Destination queues report to the engine, which does not exist yet while they are
        // built: they hold it through this box, filled in at the end of init.
        let reference = EngineReference()
        let events = DestinationQueue.Events(
            attempted: { job, attempt in reference.engine?.recordAttempt(job, attempt) },
            delivered: { job in reference.engine?.recordDelivery(job) },
            deadLettered: { job, reason, detail in
                reference.engine?.deadLetter(job.notification, key: job.destination, destination: job.destination,
                                             reason: reason, detail: detail, attempts: job.attempts)
            })
        var queues: [String: DestinationQueue] = [:]
        for destination in configuration.destinations {
            queues[destination.name] = try Self.makeQueue(
                destination, client: client, clock: clock, logger: logger, events: events)
        }
        self.journal = journal
        self.deadLetters = deadLetters
        self.client = client
        self.clock = clock
        self.logger = logger
        destinations = queues
        destinationOrder = configuration.destinations.map(\.name)
        tracker = Locked(EventTracker())
        reference.engine = self
    }

    /// Delivers a notification the journal just stored at `position`.
    public func submit(_ notification: StoredNotification, position: RecordPosition) {
        start(notification, segment: position.segment, progress: [:])
    }

    /// Status of every destination, in configuration order.
    public var status: [DestinationStatus] {
        destinationOrder.compactMap { destinations[$0]?.status }
    }

    /// Stops every destination; unfinished deliveries resume from the journal on the next start.
    public func stop(completion: @escaping @Sendable () -> Void) {
        let group = DispatchGroup()
        for queue in destinations.values {
            group.enter()
            queue.stop { group.leave() }
        }
        group.notify(queue: queue) { [client] in
            client.shutdown()
            completion()
        }
    }

    private static func makeQueue(
        _ destination: DestinationConfiguration, client: HTTPClient, clock: any Clock, logger: Logger,
        events: DestinationQueue.Events
    ) throws -> DestinationQueue {
        switch destination.kind {
        case .webhook(let options):
            let driver = WebhookDriver(request: try WebhookRequest(options: options), client: client, clock: clock)
            let limits = DeliveryLimits(
                maxAttempts: options.maxAttempts, maxAge: options.maxAge,
                schedule: RetrySchedule(initial: options.backoffInitial, maximum: options.backoffMaximum))
            return DestinationQueue(name: destination.name, kind: "webhook", driver: driver, limits: limits,
                                    clock: clock, events: events)
        case .file(let options):
            var queueOptions = FileQueueOptions(
                rotateSize: options.rotateSize, rotateAge: options.rotateInterval,
                compression: options.compression == .gzip ? .gzip : .none)
            queueOptions.clock = clock
            let fileQueue = try FileQueue.open(directory: options.directory, options: queueOptions, logger: logger)
            // A local file queue fails only when the disk does: keep trying, briefly at first.
            let limits = DeliveryLimits(
                maxAttempts: Int.max, maxAge: .seconds(365 * 86400),
                schedule: RetrySchedule(initial: .milliseconds(100), maximum: .seconds(30)))
            return DestinationQueue(name: destination.name, kind: "file", driver: FileQueueDriver(queue: fileQueue, clock: clock),
                                    limits: limits, clock: clock, events: events)
        }
    }
}

/// Lets destination queues reach the engine that owns them without a retain cycle.
private final class EngineReference: @unchecked Sendable {
    // Written once, at the end of the engine's init, before any queue can report.
    weak var engine: DeliveryEngine?
}
