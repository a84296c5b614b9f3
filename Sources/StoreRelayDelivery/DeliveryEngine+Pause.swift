import Dispatch
import StoreRelayCore

/// Pause and resume (SPEC "Delivery controls"), single-node mode: the paused set is stored
/// durably first, then the destination's queue is told, so an answer of "paused" survives a
/// crash right after it.
extension DeliveryEngine {
    /// Pauses or resumes destination `name`.
    public func setPaused(_ pause: Bool, destination name: String) async -> PauseOutcome {
        guard topology.current.queues[name] != nil else { return .unknownDestination }
        return await withCheckedContinuation { continuation in
            pauseQueue.async { [self] in continuation.resume(returning: storeAndApply(pause, destination: name)) }
        }
    }

    /// On `pauseQueue`, one change at a time: the queue hears the changes in the order they
    /// were stored, so two operators racing leave the file and the queue agreeing.
    private func storeAndApply(_ pause: Bool, destination name: String) -> PauseOutcome {
        dispatchPrecondition(condition: .onQueue(pauseQueue))
        var next = paused.current
        let changed = pause ? next.insert(name).inserted : next.remove(name) != nil
        if changed {
            do {
                try pausedFile.store(next)
            } catch {
                logger.error("cannot store the paused destinations", [("destination", name), ("error", "\(error)")])
                return .failed("cannot store the paused destinations: \(error)")
            }
            paused.withLock { $0 = next }
            logger.notice(pause ? "destination paused" : "destination resumed", [("destination", name)])
        }
        // Told even when the set already said so: a queue a reload built meanwhile agrees.
        topology.current.queues[name]?.setPaused(pause)
        return .done(changed: changed)
    }
}
