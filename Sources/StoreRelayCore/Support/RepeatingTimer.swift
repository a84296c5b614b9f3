import Dispatch

/// Runs a handler on a queue every so often until stopped: heartbeats, watches, maintenance
/// passes, probes.
///
/// One type because each of those wrote out the same Dispatch steps (a timer source on its
/// queue, a repeating schedule with leeway, resume, a cancel under a lock on stop), and each
/// copy was another chance to forget the resume or the cancel. Handlers should hold their
/// owner weakly, so that the timer never keeps it alive.
///
/// The source is only touched under `source`'s lock. The handler runs on its queue outside
/// that lock, so it may call `stop()`: Dispatch finishes a handler call under way after a
/// cancel but starts no other.
public final class RepeatingTimer: Sendable {
    private let source = Locked<(any DispatchSourceTimer)?>(nil)

    public init() {}

    deinit {
        source.withLock { $0?.cancel() }
    }

    /// Runs `handler` on `queue` once `delay` has passed, then every `interval` (Dispatch may
    /// run it up to `leeway` late, to group wake-ups), until `stop()`. Starting again replaces
    /// the schedule.
    public func start(after delay: Duration = .zero, every interval: Duration, leeway: Duration = .zero, on queue: DispatchQueue,
                      handler: @escaping @Sendable () -> Void) {
        source.withLock { current in
            current?.cancel()
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now().advanced(by: delay), repeating: interval.dispatchInterval, leeway: leeway.dispatchInterval)
            timer.setEventHandler(handler: handler)
            // Resumed under the lock: a first tick that stops the timer finds it stored.
            timer.resume()
            current = timer
        }
    }

    /// No call of the handler starts after this; one under way finishes. Idempotent, and
    /// safe from the handler itself.
    public func stop() {
        source.withLock { current in
            current?.cancel()
            current = nil
        }
    }
}
