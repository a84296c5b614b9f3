import StoreRelayDelivery
import StoreRelayCore

/// The one place the gateway raises its own events (SPEC "Event log, search and operational
/// events"): each detector (a breaker, the dead-letter writer, a reconciliation, the
/// cluster's epoch, the intake and disk watches) calls a method here, and this type turns it
/// into an `OperationalEvent` for the `operational-events` destination's queue.
///
/// Never blocks: `OperationalEventQueue.send` hands over and returns, so a breaker settling
/// or an acceptance is not held up. Without `operational-events` nothing is queued.
///
/// No recursion: an event *about* the operational-events destination itself (its breaker,
/// its dead letters) is logged, not sent: it would go to the one destination known to be
/// failing. The queue's own failures never come back here (see `OperationalEventQueue`).
final class OperationalEvents: Sendable {
    private let sink = Locked<OperationalEventQueue?>(nil)
    /// Cluster mode: this instance's id, added to every event as `instance`: each instance
    /// watches its own breakers, intake and disk, so a receiver must tell them apart.
    private let instance = Locked<String?>(nil)
    private let clock: any TimeSource
    private let logger: Logger
    /// Dead letters, counted per destination and sent once a window (`dead_letter.created`).
    let deadLetters: CountBatcher
    /// Tampered records, counted per kind of record and sent once a window (`cluster.tampered`).
    let tampered: CountBatcher

    /// - Parameter batchWindow: how long dead letters and tampered records are counted before
    ///   one event says how many (a minute; tests shorten it).
    init(clock: any TimeSource = WallClock(), logger: Logger = .disabled, batchWindow: Duration = .seconds(60)) {
        self.clock = clock
        self.logger = logger
        deadLetters = CountBatcher(window: batchWindow)
        tampered = CountBatcher(window: batchWindow)
        deadLetters.onFlush = { [weak self] destination, reasons in
            let total = reasons.values.reduce(0, +)
            self?.emit("dead_letter.created", about: destination.isEmpty ? nil : destination, [
                ("destination", destination.isEmpty ? .null : .string(destination)), ("count", .integer(Int64(total))),
                ("reasons", .object(JSONObject(reasons.sorted { $0.key < $1.key }.map { ($0.key, .integer(Int64($0.value))) }))),
            ])
        }
        tampered.onFlush = { [weak self] record, details in
            self?.emit("cluster.tampered", [("record", .string(record)), ("count", .integer(Int64(details.values.reduce(0, +))))])
        }
    }

    /// Sends to `queue` from now on (nil: to nothing); returns the queue replaced, for the
    /// caller to stop.
    @discardableResult
    func attach(_ queue: OperationalEventQueue?) -> OperationalEventQueue? {
        let previous = sink.withLock { current in
            defer { current = queue }
            return current
        }
        let active = queue != nil
        deadLetters.setRunning(active)
        tampered.setRunning(active)
        return previous
    }

    /// What became of the events handed to the current queue.
    var counts: OperationalEventQueue.Counts { sink.current?.counts ?? OperationalEventQueue.Counts() }

    /// The destination they go to, if any.
    var destination: String? { sink.current?.destination }

    /// Tags every event from now on with `instance` (cluster mode).
    func setInstance(_ id: String?) { instance.withLock { $0 = id } }

    /// Cluster mode's instance id; nil in single-node mode.
    var instanceId: String? { instance.current }

    /// Queues one event of `type` now; `about` names the destination it concerns, so one
    /// about the operational-events destination itself is only logged.
    func emit(_ type: String, about destination: String? = nil, _ details: [(String, JSONValue)]) {
        guard let queue = sink.current else { return }
        var details = details
        if let instance = instance.current { details.append(("instance", .string(instance))) }
        let event = OperationalEvent(type: type, at: clock.now(), details: JSONObject(details))
        if let destination, destination == queue.destination {
            logger.warning("operational event about its own destination not sent", [("type", type), ("destination", destination)])
            return
        }
        queue.send(event)
    }

    func stop() {
        deadLetters.setRunning(false)
        tampered.setRunning(false)
        attach(nil)?.stop()
    }
}

extension OperationalEvents: DeliveryObserver {
    func attemptFinished(destination: String, outcome: String, seconds: Double) {}

    func deadLettered(destination: String?, reason: DeadLetter.Reason) {
        guard sink.current != nil else { return }
        deadLetters.add(destination ?? "", detail: reason.rawValue)
    }

    func recordTampered(record: String) {
        guard sink.current != nil else { return }
        tampered.add(record, detail: record)
    }

    func breakerChanged(destination: String, open: Bool, error: String?) {
        var details: [(String, JSONValue)] = [("destination", .string(destination))]
        if let error { details.append(("error", .string(error))) }
        emit(open ? "destination.breaker_opened" : "destination.breaker_closed", about: destination, details)
    }
}
