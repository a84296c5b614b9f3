import Dispatch
import StoreRelayDelivery
import StoreRelayVerification
import StoreRelayStorage
import StoreRelayCore

/// The acceptance pipeline: verify and normalize off the connection's queue, then journal,
/// then answer — 200 only once the record is durable: fsync'ed in the journal, or
/// acknowledged by the cluster server (SPEC "Public listener", "Cluster mode").
final class NotificationIntake: Sendable {
    /// Replaced as a whole by a configuration reload; each notification uses one snapshot.
    private let processor: Locked<NotificationProcessor>
    /// The processor in force, shared with what reprocesses stored notifications (replays).
    var processorCell: Locked<NotificationProcessor> { processor }
    private let store: any NotificationStore
    private let clock: any TimeSource
    private let logger: Logger
    private let metrics: GatewayMetrics
    private let intakeWatch: IntakeSilenceWatch?
    /// ECDSA verification is CPU work: it runs on the cooperative width of this concurrent
    /// queue, never on a connection's serial queue.
    private let verificationQueue = DispatchQueue(
        label: "storerelay.verification", attributes: .concurrent, target: .nonBlockingWork)

    init(processor: NotificationProcessor, store: any NotificationStore, clock: any TimeSource,
         logger: Logger, metrics: GatewayMetrics, intakeWatch: IntakeSilenceWatch? = nil) {
        self.metrics = metrics
        self.intakeWatch = intakeWatch
        self.processor = Locked(processor)
        self.store = store
        self.clock = clock
        self.logger = logger
    }

    /// Applies a reloaded configuration to notifications that arrive from now on.
    func replace(processor: NotificationProcessor) {
        self.processor.withLock { $0 = processor }
    }

    /// Handles one body posted on a path bound to `pathEnvironment` (nil: any environment)
    /// by `client` (the peer's `ip:port`, for the log lines an operator greps by).
    func receive(
        body: [UInt8], pathEnvironment: AppStoreEnvironment?, client: String? = nil,
        completion: @escaping @Sendable (IntakeOutcome) -> Void
    ) {
        let started = MonotonicClock.nanoseconds()
        let received = SpanClock.now()
        verificationQueue.async { [self] in
            var timing = IntakeSpans(received: received)
            timing.verifyStart = SpanClock.now()
            let processed: StoredNotification
            do throws(IntakeRejection) {
                processed = try processor.current.process(body: body, pathEnvironment: pathEnvironment, receivedAt: clock.now())
            } catch {
                logger.notice("notification rejected", [("reason", error.message), ("client", client ?? "")])
                answer(.rejected(error), event: nil, pathEnvironment: pathEnvironment, started: started, completion: completion)
                return
            }
            timing.verifyEnd = SpanClock.now()
            timing.journalStart = timing.verifyEnd
            keep(processed, client: client) { [self, timing] outcome in
                let answered = SpanClock.now()
                answer(outcome, event: processed.event, started: started, completion: completion)
                // After the answer: recording takes a lock, and the answer waits for nothing.
                record(timing, outcome, processed.event, answered: answered)
            }
        }
    }

    /// The acceptance's spans, when tracing is on (`tracing otlp`).
    private func record(_ timing: IntakeSpans, _ outcome: IntakeOutcome, _ event: NormalizedEvent, answered: UInt64,
                        recoveredBy: String? = nil) {
        guard let exporter = metrics.spans,
              let spans = timing.spans(for: outcome, event: event, store: store is ClusterStore ? "cluster" : "journal",
                                       answered: answered, recoveredBy: recoveredBy) else { return }
        for span in spans { exporter.record(span) }
    }

    /// Takes one notification fetched from Apple's Notification History through the same
    /// pipeline (verification at its own dates, policy, dedupe, routing, journal), its event
    /// marked `recoveredBy: "history"`. One already received is a duplicate, as an Apple retry
    /// would be. With `dryRun` nothing is stored: the outcome says what would happen.
    func recover(
        signedPayload: String, dryRun: Bool, completion: @escaping @Sendable (IntakeOutcome) -> Void
    ) {
        let received = SpanClock.now()
        verificationQueue.async { [self] in
            var timing = IntakeSpans(received: received)
            timing.verifyStart = SpanClock.now()
            let body = JSONValue.object(JSONObject([("signedPayload", .string(signedPayload))])).serializedBytes()
            let processed: StoredNotification
            do throws(IntakeRejection) {
                processed = try processor.current.process(body: body, pathEnvironment: nil, receivedAt: clock.now(),
                                                          recoveredBy: "history")
            } catch {
                logger.warning("recovered notification rejected", [("reason", error.message)])
                completion(.rejected(error))
                return
            }
            guard !dryRun else {
                let id = processed.id
                return store.contains(id: id) { known in
                    switch known {
                    case true: completion(.duplicate(id: id))
                    case false: completion(processed.disposition == .accept ? .accepted(id: id) : .quarantined(id: id))
                    case nil:
                        completion(.rejected(.unavailable("Could not tell whether it was received: the store did not answer, or is storing it right now.")))
                    }
                }
            }
            timing.verifyEnd = SpanClock.now()
            timing.journalStart = timing.verifyEnd
            keep(processed) { [self, timing] outcome in
                let answered = SpanClock.now()
                completion(outcome)
                // Its delivery attempts name this event's receive span as their parent.
                record(timing, outcome, processed.event, answered: answered, recoveredBy: "history")
            }
        }
    }

    /// Counts and times the answer, then gives it. A body refused before it became an event
    /// is counted for app `unknown` in its path's environment, when the path names one.
    private func answer(
        _ outcome: IntakeOutcome, event: NormalizedEvent?, pathEnvironment: AppStoreEnvironment? = nil, started: UInt64,
        completion: @escaping @Sendable (IntakeOutcome) -> Void
    ) {
        metrics.intake.count(app: event?.bundleId, environment: (event?.environment ?? pathEnvironment)?.rawValue,
                             outcome: outcome.label, at: clock.now())
        // Only a V1 notification has a legacy type.
        let version = event.map { $0.legacyType == nil ? "2" : "1" }
        if case .accepted = outcome, let event {
            intakeWatch?.received(app: event.bundleId ?? "unknown", environment: event.environment?.rawValue ?? "unknown")
        }
        metrics.notificationAnswered(
            app: event?.bundleId, environment: event?.environment?.rawValue, version: version, outcome: outcome.label,
            seconds: Double(MonotonicClock.nanoseconds() - started) / 1e9)
        completion(outcome)
    }

    /// `client`: who posted it; nil for a notification recovered from Apple's history.
    private func keep(_ stored: StoredNotification, client: String? = nil, completion: @escaping @Sendable (IntakeOutcome) -> Void) {
        let id = stored.id
        let event = stored.event
        let reason = store.unavailableReason
        store.store(stored) { [logger] outcome in
            switch outcome {
            case .stored:
                if case .quarantine(let reason) = stored.disposition {
                    logger.warning("notification quarantined", [
                        ("event.id", id), ("event.type", event.type), ("environment", event.environment?.rawValue ?? "unknown"),
                        ("bundle.id", event.bundleId ?? ""), ("original.transaction.id", event.originalTransactionId ?? ""),
                        ("client", client ?? ""), ("reason", reason),
                    ])
                    completion(.quarantined(id: id))
                } else {
                    logger.info("notification accepted", [
                        ("event.id", id), ("event.type", event.type), ("event.subtype", event.subtype ?? ""),
                        ("environment", event.environment?.rawValue ?? "unknown"), ("bundle.id", event.bundleId ?? ""),
                        ("original.transaction.id", event.originalTransactionId ?? ""), ("client", client ?? ""),
                    ])
                    completion(.accepted(id: id))
                }
            case .duplicate:
                logger.info("duplicate notification", [("event.id", id), ("client", client ?? "")])
                completion(.duplicate(id: id))
            case .failed(let error):
                logger.error("notification not stored", [
                    ("event.id", id), ("original.transaction.id", event.originalTransactionId ?? ""), ("client", client ?? ""), ("error", error),
                ])
                completion(.rejected(.unavailable(
                    "The notification could not be stored; retry later (\(reason)).")))
            }
        }
    }
}
