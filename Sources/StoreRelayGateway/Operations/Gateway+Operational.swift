import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayCore

extension Gateway {
    /// Points the operational events at `configuration`'s `operational-events` destination
    /// (opening its kind a second time, for them alone), or at nothing, and applies the
    /// thresholds. At start and after each reload; a destination whose definition did not
    /// change keeps its queue.
    func applyOperationalEvents(_ configuration: GatewayConfiguration, previous: GatewayConfiguration?) {
        let ops = configuration.operationalEvents
        // The watches start after the queue is attached: the disk's first check is at once,
        // and a crossing found before there is somewhere to send it would never be told.
        defer {
            intakeWatch.start(silence: hooks.intakeSilence ?? ops.intakeSilence, interval: hooks.operationalCheckInterval)
            diskWatch.setThreshold(ops.diskLow)
            diskWatch.start(interval: hooks.operationalCheckInterval ?? .seconds(60))
        }
        let definition = ops.destination.flatMap { name in configuration.destinations.first { $0.name == name } }
        let old = previous?.operationalEvents.destination.flatMap { name in previous?.destinations.first { $0.name == name } }
        if previous != nil, definition == old { return }
        var queue: OperationalEventQueue?
        if let definition {
            do {
                // Instances sharing a volume must not share a file queue's segment.
                let subdirectory = operational.instanceId.map { $0 + "/operational" } ?? "operational"
                queue = try OperationalEventQueue(definition, clock: clock, logger: logger, fileSubdirectory: subdirectory) {
                    [metrics] outcome in
                    metrics.operationalEvent(outcome)
                }
            } catch {
                logger.error("operational events: cannot open their destination; none are sent", [
                    ("destination", definition.name), ("error", "\(error)"),
                ])
            }
        }
        operational.attach(queue)?.stop()
        diskWatch.rearm()
    }

    /// Stops the watches and the queue; what waits is dropped (see `OperationalEventQueue`).
    func stopOperationalEvents() {
        intakeWatch.stop()
        diskWatch.stop()
        operational.stop()
    }
}
