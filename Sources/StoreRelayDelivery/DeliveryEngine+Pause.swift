import Dispatch
import StoreRelayCore

/// Pause and resume (SPEC "Delivery controls"), single-node mode: the paused set is stored
/// durably first, then the destination's queue is told, so an answer of "paused" survives a
/// crash right after it.
extension DeliveryEngine {
    /// Pauses or resumes destination `name`.
    public func setPaused(_ pause: Bool, destination name: String) async -> PauseOutcome {
        guard topology.current.queues[name] != nil else { return .unknownDestination }
        let stored: PauseOutcome = await withCheckedContinuation { continuation in
            pauseQueue.async { [self] in
                var next = paused.current
                let changed = pause ? next.insert(name).inserted : next.remove(name) != nil
                guard changed else { return continuation.resume(returning: .done(changed: false)) }
                do {
                    try pausedFile.store(next)
                } catch {
                    logger.error("cannot store the paused destinations", [("destination", name), ("error", "\(error)")])
                    return continuation.resume(returning: .failed("cannot store the paused destinations: \(error)"))
                }
                paused.withLock { $0 = next }
                continuation.resume(returning: .done(changed: true))
            }
        }
        // Told even when already so in the set: a queue a reload built meanwhile agrees.
        if case .done(let changed) = stored {
            topology.current.queues[name]?.setPaused(pause)
            if changed { logger.notice(pause ? "destination paused" : "destination resumed", [("destination", name)]) }
        }
        return stored
    }
}
