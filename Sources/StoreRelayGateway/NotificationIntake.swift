import Dispatch
import StoreRelayJournal
import StoreRelaySupport

/// The acceptance pipeline: verify and normalize off the connection's queue, then journal,
/// then answer — 200 only once the record is fsync'ed (SPEC "Public listener").
final class NotificationIntake: Sendable {
    private let processor: NotificationProcessor
    private let journal: Journal
    private let clock: any Clock
    private let logger: Logger
    /// ECDSA verification is CPU work: it runs on the cooperative width of this concurrent
    /// queue, never on a connection's serial queue.
    private let verificationQueue = DispatchQueue(
        label: "storerelay.verification", qos: .userInitiated, attributes: .concurrent)

    init(processor: NotificationProcessor, journal: Journal, clock: any Clock, logger: Logger) {
        self.processor = processor
        self.journal = journal
        self.clock = clock
        self.logger = logger
    }

    /// Handles one body posted on a path bound to `pathEnvironment` (nil: any environment).
    func receive(
        body: [UInt8], pathEnvironment: AppStoreEnvironment?,
        completion: @escaping @Sendable (IntakeOutcome) -> Void
    ) {
        verificationQueue.async { [self] in
            let processed: ProcessedNotification
            do throws(IntakeRejection) {
                processed = try processor.process(body: body, pathEnvironment: pathEnvironment, receivedAt: clock.now())
            } catch {
                logger.notice("notification rejected", [("reason", error.message)])
                completion(.rejected(error))
                return
            }
            store(processed, completion: completion)
        }
    }

    private func store(_ processed: ProcessedNotification, completion: @escaping @Sendable (IntakeOutcome) -> Void) {
        let stored = StoredNotification(processed)
        let id = stored.id
        let event = processed.event
        journal.append(id: id, payload: stored.encoded()) { [logger] outcome in
            switch outcome {
            case .stored:
                if case .quarantine(let reason) = processed.disposition {
                    logger.warning("notification quarantined", [
                        ("event.id", id), ("event.type", event.type), ("environment", event.environment.rawValue),
                        ("bundle.id", event.bundleId ?? ""), ("reason", reason),
                    ])
                    completion(.quarantined(id: id))
                } else {
                    logger.info("notification accepted", [
                        ("event.id", id), ("event.type", event.type), ("event.subtype", event.subtype ?? ""),
                        ("environment", event.environment.rawValue), ("bundle.id", event.bundleId ?? ""),
                    ])
                    completion(.accepted(id: id))
                }
            case .duplicate:
                logger.info("duplicate notification", [("event.id", id)])
                completion(.duplicate(id: id))
            case .failed(let error):
                logger.error("journal write failed", [("event.id", id), ("error", "\(error)")])
                completion(.rejected(.unavailable(
                    "The notification could not be stored; retry later (the journal cannot write).")))
            }
        }
    }
}
