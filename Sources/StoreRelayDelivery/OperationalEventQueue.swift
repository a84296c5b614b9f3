import Dispatch
import StoreRelayConfig
import StoreRelayNet
import StoreRelayCore

/// Delivers operational events to their destination through the delivery core: an
/// `AttemptRunner` over the destination's own kind, so they are signed, retried with the
/// destination's backoff and held back by a breaker exactly as events are.
///
/// Why a bounded queue in memory and not the journal: these events are not Apple's (nothing
/// is lost that Apple would resend or reconciliation would recover), each describes a state
/// the gateway re-detects after a restart (a breaker opens again, a silent app is silent
/// again, the disk is still low), and journaling them would put the gateway's own chatter
/// into the event log, the dead letters and the fan-out bookkeeping. At `capacity` the oldest
/// waiting event is dropped (and counted): the newest says most about now.
///
/// No recursion: a failure here is logged and counted, never reported as an operational
/// event, and an event this queue gives up on is dropped, never dead-lettered.
///
/// The invariant behind `@unchecked Sendable`: `waiting`, `timer` and `stopped` are touched
/// only on `queue`, which is also the runner's queue; `counts` has its own lock.
public final class OperationalEventQueue: @unchecked Sendable {
    /// What became of the events handed over, for `/metrics`.
    public struct Counts: Sendable, Equatable {
        public var delivered = 0
        /// Given up on: the attempt budget was spent, the destination refused, or the queue
        /// was full.
        public var dropped = 0
        public init() {}
    }

    public let destination: String
    private let runner: AttemptRunner
    private let chat: Bool
    private let queue: DispatchQueue
    private let clock: any TimeSource
    private let logger: Logger
    private let client: HTTPClient
    private let capacity: Int
    private var waiting: [DeliveryJob] = []
    private var timer: (any DispatchSourceTimer)?
    private var stopped = false
    private let tally = Locked(Counts())
    /// Told `delivered` or `dropped` for each event (the gateway's counter).
    private let counted: @Sendable (String) -> Void

    /// Opens `definition`'s kind a second time, for these events only. A file queue writes
    /// under `DIR/<fileSubdirectory>/` (`operational`; cluster mode adds the instance id, as
    /// its events' writer does), so it never shares a segment with another writer.
    public init(_ definition: DestinationConfiguration, clock: any TimeSource = WallClock(), logger: Logger,
                capacity: Int = 1000, fileSubdirectory: String = "operational",
                counted: @escaping @Sendable (String) -> Void = { _ in }) throws(DeliveryError) {
        self.counted = counted
        var clientConfiguration = HTTPClientConfiguration()
        clientConfiguration.logger = logger
        client = HTTPClient(configuration: clientConfiguration)
        let setup = try DestinationSetup(definition, client: client, clock: clock, logger: logger, fileSubdirectory: fileSubdirectory)
        destination = definition.name
        if case .webhook(let options) = definition.kind { chat = options.delivery.format == .slack } else { chat = false }
        queue = DispatchQueue(label: "storerelay.operational-events")
        self.clock = clock
        self.logger = logger
        self.capacity = max(1, capacity)
        // No observer: these attempts are not Apple's deliveries, so they stay out of
        // `storerelay_deliveries_total`, and a breaker here must not report about itself.
        runner = AttemptRunner(destination: definition.name, setup: setup, queue: queue, clock: clock,
                               observer: NoDeliveryObserver(), logger: logger)
    }

    public var counts: Counts { tally.current }

    /// Queues `event` and returns at once: the caller (an acceptance, a breaker's settle)
    /// never waits for the destination.
    public func send(_ event: OperationalEvent) {
        let body = chat ? ChatMessage.body(event.summary) : JSONValue.object(event.json).serializedBytes()
        // Due now, whatever `at` says: the event's time is the detector's, the queue's is its own.
        let now = clock.now()
        let job = DeliveryJob(notification: event.notification, destination: destination, body: body, attempts: [],
                              due: now, budgetStart: now)
        queue.async { [self] in
            guard !stopped else { return }
            if waiting.count >= capacity {
                let oldest = waiting.removeFirst()
                drop(oldest, why: "the queue of operational events is full (\(capacity))")
            }
            waiting.append(job)
            pump()
        }
    }

    /// Stops sending: what waits is dropped (see the type's note), attempts in flight end
    /// unanswered, and the kind is closed.
    public func stop(completion: @escaping @Sendable () -> Void = {}) {
        queue.async { [self] in
            stopped = true
            timer?.cancel()
            timer = nil
            waiting.removeAll()
            runner.close { [client] in
                client.shutdown()
                completion()
            }
        }
    }

    /// Starts every due job the slots, the rate and the breaker allow; arms the timer for
    /// the next one that is not due yet.
    private func pump() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard !stopped else { return }
        let now = clock.now()
        var held = false
        while runner.room > 0, let index = waiting.firstIndex(where: { $0.due <= now }) {
            if let verdict = runner.expired(waiting[index], now: now) {
                waiting.remove(at: index)
                finish(verdict)
                continue
            }
            guard runner.allowsAttempt(at: now) else {
                held = true
                break
            }
            let job = waiting.remove(at: index)
            runner.take()
            runner.attempt(job) { [self] outcome in
                runner.release()
                finish(runner.settle(job, outcome))
                pump()
            }
        }
        arm(now: now, held: held)
    }

    private func finish(_ verdict: AttemptVerdict) {
        switch verdict {
        case .delivered:
            tally.withLock { $0.delivered += 1 }
            counted("delivered")
        case .retry(let job, _):
            waiting.append(job)
        case .deadLetter(let job, _, let detail):
            drop(job, why: detail)
        }
    }

    private func drop(_ job: DeliveryJob, why: String) {
        tally.withLock { $0.dropped += 1 }
        counted("dropped")
        logger.warning("operational event dropped", [
            ("destination", destination), ("event.id", job.eventId), ("type", job.notification.event.type), ("reason", why),
        ])
    }

    /// Wakes `pump` when the earliest waiting job falls due, the breaker's probe may go, or
    /// the rate has a token. Nothing to wait for when every slot is busy or the breaker's
    /// probe is out (`held` with no `openUntil`): the attempt's end pumps again.
    private func arm(now: Timestamp, held: Bool) {
        timer?.cancel()
        timer = nil
        guard runner.room > 0, var next = waiting.map(\.due).min() else { return }
        if held {
            guard let wake = runner.openUntil ?? runner.nextToken(at: now) else { return }
            next = max(next, wake)
        }
        let delay = max(Int64(1), next.milliseconds - now.milliseconds)
        let source = DispatchSource.makeTimerSource(queue: queue)
        source.schedule(deadline: .now() + .milliseconds(Int(delay)))
        source.setEventHandler { [weak self] in self?.pump() }
        source.resume()
        timer = source
    }
}
