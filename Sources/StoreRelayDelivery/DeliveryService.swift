import StoreRelayConfig
import StoreRelayStorage
import StoreRelayCore

/// What the gateway's admin listener, metrics and reload need from delivery, whichever mode
/// runs it: `DeliveryEngine` over the journal (single-node mode), or cluster mode's delivery
/// over the shared server.
public protocol DeliveryService: AnyObject, Sendable {
    /// Status of every destination, in configuration order.
    var status: [DestinationStatus] { get }
    /// Where the deliveries of event `id` stand, while it is known. Reads the journal or
    /// waits for the cluster server: call it off the accepting pool.
    func state(ofEvent id: String) async -> EventDeliveryState?
    /// The known events of one subscription, newest first, at most `limit`.
    func events(ofSubscription originalTransactionId: String, limit: Int) async -> [EventDeliveryState]
    /// The dead letters.
    var deadLetterArchive: any DeadLetterArchive { get }
    /// How many dead letters there are, by destination, as last read (for `/metrics`, which
    /// renders synchronously; `refreshDeadLetterCounts` reads them again).
    var deadLetterCounts: [String?: Int] { get }
    /// Reads the dead-letter counts again (cluster mode asks the server; the file store
    /// always knows them).
    func refreshDeadLetterCounts() async
    /// Queues dead letter `deadLetterId` again with a fresh attempt budget; a stale one only
    /// when `force` (`StalenessRule`).
    func replay(deadLetterId: String, force: Bool) async -> ReplayResult
    /// Replays every dead letter in `query.bulkReplayScope` (stale ones only when `force`).
    func replayAll(_ query: DeadLetterQuery, force: Bool) async -> BulkReplayResult
    /// Sends event `eventId`, delivered already, to destination `destination` again with its
    /// own `webhook-id` and `StoreRelay-Redelivery: 1` (SPEC "Delivery controls").
    func redeliver(eventId: String, destination: String) async -> RedeliveryOutcome
    /// Pauses or resumes destination `destination` (SPEC "Delivery controls"): durably (a
    /// file in single-node mode, a key on the server in cluster mode, so every instance
    /// follows), before it answers.
    func setPaused(_ pause: Bool, destination: String) async -> PauseOutcome
    /// Applies a reloaded configuration's destinations and routes; `completion` gets the
    /// error when a new or redefined destination cannot be opened (nil once applied).
    func reconfigure(_ configuration: GatewayConfiguration, completion: @escaping @Sendable (DeliveryError?) -> Void)
    /// Stops every destination; attempts in flight get `grace` to finish.
    func stop(grace: Duration, completion: @escaping @Sendable () -> Void)
    /// Reads a stored notification's Apple body again with the running build (set by the
    /// gateway): how a replay delivers a notification an older build could not read.
    var reprocess: Locked<(@Sendable (StoredNotification) -> StoredNotification?)?> { get }
    /// The on-disk event log behind `GET /api/events` in single-node mode; nil in cluster
    /// mode, whose log is on the server (`searchEvents`).
    var eventLog: EventLog? { get }
    /// A page of the event log, newest first (`GET /api/events`): the local log's, or the
    /// server's in cluster mode; nil where none is kept.
    func searchEvents(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError>?
}

extension DeliveryService {
    public var eventLog: EventLog? { nil }

    public func searchEvents(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError>? {
        await eventLog?.search(query, limit: limit, after: cursor)
    }
}

extension DeliveryEngine: DeliveryService {
    public var deadLetterArchive: any DeadLetterArchive { deadLetters }
    public var deadLetterCounts: [String?: Int] { deadLetters.countsByDestination }
    public func refreshDeadLetterCounts() async {}
}
