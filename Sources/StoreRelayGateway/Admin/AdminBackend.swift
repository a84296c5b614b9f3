import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore

/// What the admin listener needs from the running gateway. The gateway implements it; tests
/// use a double.
///
/// What may wait (the journal, the cluster server) is `async`: the listener runs each
/// request as a task on its own queue (`AdminExecutor`), so a request waiting for a stalled
/// server suspends and the others are answered meanwhile.
public protocol AdminBackend: Sendable {
    /// Every destination's queue depth, in-flight count, breaker state, last success and error.
    var destinationStatuses: [DestinationStatus] { get }
    /// One event and its delivery state per destination, while the gateway still knows it
    /// (unfinished events, and a bounded window of recently finished ones); nil otherwise.
    func event(id: String) async -> EventDeliveryState?
    /// The events of one subscription (by original transaction id) still known, newest first.
    func events(ofSubscription originalTransactionId: String) async -> [EventDeliveryState]
    /// A page of the event log (`GET /api/events`), newest first; nil where no event log is
    /// kept (tests' doubles without one).
    func searchEvents(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError>?
    /// The dead-letter store (list, read, delete).
    var deadLetters: any DeadLetterArchive { get }
    /// Re-queues one dead letter with a fresh attempt budget; it leaves the store when the
    /// replayed delivery succeeds. Unrouted and quarantined ones are routed again with the
    /// current configuration. One whose notification is stale is refused unless `force`.
    func replay(deadLetterId: String, force: Bool) async -> ReplayOutcome
    /// Sends an event delivered already to one destination again, with its own `webhook-id`
    /// and `StoreRelay-Redelivery: 1`.
    func redeliver(eventId: String, destination: String) async -> RedeliveryOutcome
    /// Replays every dead letter in `query.bulkReplayScope` (quarantined ones only when the
    /// query names their reason; stale ones only when `force`).
    func replayAll(_ query: DeadLetterQuery, force: Bool) async -> BulkReplayResult
    /// Pauses or resumes one destination, durably and for every instance (SPEC "Delivery
    /// controls").
    func setPaused(_ pause: Bool, destination: String) async -> PauseOutcome
    /// Readiness: journal writable and configuration loaded.
    var isReady: Bool { get }
    /// Cluster mode: this instance, the live instances, the server and its durability
    /// settings; nil in single-node mode.
    var clusterStatus: JSONValue? { get async }
    /// Each app and environment reconciled with Apple: its last pass and probe (JSON objects).
    var reconciliations: [JSONValue] { get }
    /// What the page shows above everything, one sentence each (a cluster server that lost
    /// its data).
    var alerts: [String] { get }
    /// What arrived over the last 24 hours, per app and environment, on this instance.
    var intakeFigures: [IntakeFigures] { get }
    /// Runs one reconciliation pass now, after any in progress, and gives its report; nil
    /// when `app` has no api-key or `environment` is not reconciled here.
    func reconcile(app: String, environment: AppStoreEnvironment, since: Duration?, onlyFailures: Bool, dryRun: Bool,
                   completion: @escaping @Sendable (JSONValue?) -> Void)
    /// Asks Apple for a TEST notification and waits up to `timeout` for it to arrive here;
    /// nil as for `reconcile`.
    func probe(app: String, environment: AppStoreEnvironment, timeout: Duration, completion: @escaping @Sendable (JSONValue?) -> Void)
}

/// A backend that talks to no App Store Server API (tests' doubles): nothing is reconciled.
extension AdminBackend {
    public var reconciliations: [JSONValue] { [] }
    public var clusterStatus: JSONValue? { nil }
    public var alerts: [String] { [] }
    public var intakeFigures: [IntakeFigures] { [] }
    public func searchEvents(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError>? {
        nil
    }
    public func reconcile(app: String, environment: AppStoreEnvironment, since: Duration?, onlyFailures: Bool, dryRun: Bool,
                          completion: @escaping @Sendable (JSONValue?) -> Void) {
        completion(nil)
    }
    public func probe(app: String, environment: AppStoreEnvironment, timeout: Duration, completion: @escaping @Sendable (JSONValue?) -> Void) {
        completion(nil)
    }
}

/// The result of replaying one dead letter (defined with the engine that does it).
public typealias ReplayOutcome = ReplayResult
