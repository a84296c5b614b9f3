import Foundation
import StoreRelayGateway
@testable import StoreRelayDelivery
import StoreRelayVerification
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// An `AdminBackend` double over a real `DeadLetterStore` in a temporary directory. Replaying
/// removes the letter at once, as if the replayed delivery had succeeded.
final class FakeBackend: AdminBackend {
    let store: DeadLetterStore
    var deadLetters: any DeadLetterArchive { store }
    let directory: String
    private let state = Locked(State())

    struct State {
        var statuses: [DestinationStatus] = []
        var events: [String: EventDeliveryState] = [:]
        var ready = true
        var replayed: [String] = []
        var replayAllCalls: [(String?, DeadLetterReasonFilter?)] = []
        var forced: [Bool] = []
        var outcomes: [String: ReplayOutcome] = [:]
        var intake: [IntakeFigures] = []
        var cluster: JSONValue?
        var reconciliations: [JSONValue] = []
        /// Each reconcile (`probe` false) and probe asked for: app, environment, dry run.
        var appleChecks: [(app: String, environment: String, dryRun: Bool, probe: Bool)] = []
        /// Each redelivery asked for, and what the next one answers.
        var redeliveries: [(event: String, destination: String)] = []
        var redeliveryOutcome: RedeliveryOutcome = .queued
        /// The event log's summaries; nil: the gateway keeps no log.
        var logged: [EventSummary]?
    }

    init() throws {
        directory = try TestPaths.makeTemporaryDirectory("storerelay-admin").path
        store = try DeadLetterStore.open(directory: directory + "/dead-letters", logger: .disabled)
    }

    var destinationStatuses: [DestinationStatus] { state.current.statuses }
    var intakeFigures: [IntakeFigures] { state.current.intake }
    var clusterStatus: JSONValue? { state.current.cluster }
    var reconciliations: [JSONValue] { state.current.reconciliations }

    /// Records the pass and answers a report of nothing found, as a pass over an empty window would.
    func reconcile(app: String, environment: AppStoreEnvironment, since: Duration?, onlyFailures: Bool, dryRun: Bool,
                   completion: @escaping @Sendable (JSONValue?) -> Void) {
        state.withLock { $0.appleChecks.append((app, environment.rawValue, dryRun, false)) }
        completion(["outcome": "success", "dryRun": .bool(dryRun), "found": 0, "recovered": 0])
    }

    func probe(app: String, environment: AppStoreEnvironment, timeout: Duration, completion: @escaping @Sendable (JSONValue?) -> Void) {
        state.withLock { $0.appleChecks.append((app, environment.rawValue, false, true)) }
        completion(["outcome": "arrived", "roundTripMs": 900])
    }
    var isReady: Bool { state.current.ready }
    func event(id: String) -> EventDeliveryState? { state.current.events[id] }

    func events(ofSubscription originalTransactionId: String) -> [EventDeliveryState] {
        state.current.events.values.filter { $0.notification.event.originalTransactionId == originalTransactionId }
            .sorted { $0.notification.id < $1.notification.id }
    }

    /// An outcome set in `outcomes` wins, except that `force` replays a letter set `.stale`.
    func replay(deadLetterId: String, force: Bool) -> ReplayOutcome {
        state.withLock { $0.forced.append(force) }
        switch state.current.outcomes[deadLetterId] {
        case .stale? where force, nil: break
        case let outcome?: return outcome
        }
        guard let letter = store.letter(id: deadLetterId) else { return .notFound }
        store.delete(id: deadLetterId)
        state.withLock { $0.replayed.append(deadLetterId) }
        return .replayed(destinations: letter.destination.map { [$0] } ?? ["ledger"])
    }

    func replayAll(_ query: DeadLetterQuery, force: Bool) -> BulkReplayResult {
        state.withLock { $0.replayAllCalls.append((query.destination, query.reason)) }
        var result = BulkReplayResult()
        for letter in store.list(query.bulkReplayScope, limit: Int.max, cursor: nil).items {
            switch replay(deadLetterId: letter.id, force: force) {
            case .replayed: result.replayed += 1
            case .stale: result.stale += 1
            default: break
            }
        }
        return result
    }

    /// Pauses or resumes a destination among `statuses`, as the engine would.
    func setPaused(_ pause: Bool, destination: String) -> PauseOutcome {
        state.withLock { state in
            guard let index = state.statuses.firstIndex(where: { $0.name == destination }) else { return .unknownDestination }
            let changed = state.statuses[index].paused != pause
            state.statuses[index].paused = pause
            return .done(changed: changed)
        }
    }

    /// The event log as `EventLog` answers it: matches newest first, a page at a time (the
    /// cursor's ordinal is the offset here).
    func searchEvents(_ query: EventLogQuery, limit: Int, after cursor: EventLogCursor?) async -> Result<EventLogPage, StorageError>? {
        guard let logged = state.current.logged else { return nil }
        let matching = logged.filter(query.matches).sorted { $0.receivedAt > $1.receivedAt }
        let start = cursor?.ordinal ?? 0
        let next = start + limit < matching.count ? EventLogCursor(sequence: 1, ordinal: start + limit) : nil
        return .success(EventLogPage(items: Array(matching.dropFirst(start).prefix(limit)), nextCursor: next))
    }

    func redeliver(eventId: String, destination: String) -> RedeliveryOutcome {
        state.withLock { state in
            state.redeliveries.append((eventId, destination))
            return state.redeliveryOutcome
        }
    }

    func update(_ body: (inout State) -> Void) { state.withLock(body) }

    /// Makes `letter` the one delivery of its event, dead-lettered, as the engine would know it.
    func recordDeadLettered(_ letter: DeadLetter) throws {
        let notification = try Self.notification(id: letter.eventId, productId: "p", type: "DID_RENEW", subtype: nil,
                                                 destination: letter.destination)
        update {
            $0.events[letter.eventId] = EventDeliveryState(notification: notification, deliveries: [
                .init(destination: letter.destination ?? "", phase: .deadLettered, attempts: letter.attempts, nextAttempt: nil,
                      deadLetterId: letter.id),
            ])
        }
    }
    var replayed: [String] { state.current.replayed }
    var redeliveries: [(event: String, destination: String)] { state.current.redeliveries }
    var appleChecks: [(app: String, environment: String, dryRun: Bool, probe: Bool)] { state.current.appleChecks }
    var replayAllCalls: [(String?, DeadLetterReasonFilter?)] { state.current.replayAllCalls }
    /// `force` of every replay asked for, in order (bulk replays' letters included).
    var forced: [Bool] { state.current.forced }

    /// Writes a dead letter and waits until it is stored.
    @discardableResult
    func add(eventId: String = UUID().uuidString.lowercased(), destination: String? = "billing",
             reason: DeadLetter.Reason = .exhausted, productId: String = "com.acme.journal.monthly",
             type: String = "DID_RENEW", subtype: String? = "BILLING_RECOVERY",
             error: String = "HTTP 503 from billing", createdAt: Timestamp = .now(),
             originalTransactionId: String = "2000000123456789", transactionId: String = "2000000999999999",
             bundleId: String = "com.acme.journal") throws -> DeadLetter {
        let letter = DeadLetter(
            notification: try Self.notification(id: eventId, productId: productId, type: type, subtype: subtype,
                                                destination: destination, originalTransactionId: originalTransactionId,
                                                transactionId: transactionId, bundleId: bundleId),
            destination: destination, reason: reason, detail: "gave up",
            attempts: [DeliveryAttempt(at: createdAt, status: 503, error: error, durationMs: 12),
                       DeliveryAttempt(at: createdAt, status: 503, error: error, durationMs: 9)],
            createdAt: createdAt)
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<(any Error)?>(nil)
        store.write(letter) { result in
            if case .failure(let error) = result { failure.withLock { $0 = error } }
            done.signal()
        }
        done.wait()
        if let error = failure.current { throw error }
        return letter
    }

    /// Records an event the gateway still knows (delivered, pending...), received at `receivedAt`.
    func recordEvent(id: String, type: String = "DID_RENEW", originalTransactionId: String = "2000000123456789",
                     receivedAt: Timestamp = .now(), deliveries: [(String, EventDeliveryState.Phase)]) throws {
        var notification = try Self.notification(id: id, productId: "com.acme.journal.monthly", type: type, subtype: nil,
                                                 destination: deliveries.first?.0, originalTransactionId: originalTransactionId)
        notification.receivedAt = receivedAt
        let state = EventDeliveryState(notification: notification, deliveries: deliveries.map { destination, phase in
            .init(destination: destination, phase: phase, attempts: [], nextAttempt: nil, deadLetterId: nil)
        })
        update { $0.events[id] = state }
    }

    static func notification(id: String, productId: String, type: String, subtype: String?,
                             destination: String?, originalTransactionId: String = "2000000123456789",
                             transactionId: String = "2000000999999999",
                             bundleId: String = "com.acme.journal") throws -> StoredNotification {
        let event: JSONValue = [
            "id": .string(id), "source": "appstore", "version": "2.0", "environment": "sandbox",
            "type": .string(type), "subtype": .string(subtype), "legacyType": nil,
            "signedDate": "2026-11-20T10:15:30.123Z", "receivedAt": "2026-11-20T10:15:30.456Z",
            "app": ["bundleId": .string(bundleId), "appAppleId": 1234567890, "bundleVersion": "42"],
            "subscription": ["originalTransactionId": .string(originalTransactionId), "productId": .string(productId), "status": 1],
            "transaction": ["productId": .string(productId), "originalTransactionId": .string(originalTransactionId),
                            "transactionId": .string(transactionId)],
            "renewal": nil, "summary": nil, "externalPurchaseToken": nil, "appTransaction": nil,
            "consumptionRequestReason": nil, "raw": nil,
        ]
        let normalized = try NormalizedEvent(storedJSON: event.serializedBytes())
        return StoredNotification(event: normalized, disposition: .accept, destinations: destination.map { [$0] } ?? [],
                                  body: Array(#"{"signedPayload":"a.b.c"}"#.utf8), receivedAt: .now())
    }

    static func status(_ name: String, kind: String = "webhook", depth: Int = 0, breaker: CircuitBreaker.State = .closed,
                       lastError: String? = nil) -> DestinationStatus {
        DestinationStatus(name: name, kind: kind, queueDepth: depth, parked: 0, inFlight: depth > 0 ? 1 : 0, breaker: breaker,
                          lastSuccess: Timestamp(milliseconds: Timestamp.now().milliseconds - 60_000),
                          lastError: lastError, lastErrorAt: lastError == nil ? nil : .now())
    }
}
