import CBenchSys
#if canImport(Glibc)
import Glibc
#endif

/// A periodic timer (timerfd, nanosecond precision) on the event loop: paces the fixed-rate
/// load and samples the gateway's memory without sleeping.
public final class Ticker: EventHandler {
    private let fd: Int32
    private let action: (UInt64) -> Void

    /// Calls `action(expirations)` every `interval` nanoseconds.
    public init(loop: EventLoop, interval: UInt64, _ action: @escaping (UInt64) -> Void) throws(BenchError) {
        fd = timerfd_create(CLOCK_MONOTONIC, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { throw .system("timerfd_create") }
        self.action = action
        var spec = itimerspec()
        spec.it_interval = timespec(tv_sec: Int(interval / 1_000_000_000), tv_nsec: Int(interval % 1_000_000_000))
        spec.it_value = spec.it_interval
        guard timerfd_settime(fd, 0, &spec, nil) == 0 else { throw .system("timerfd_settime") }
        loop.add(fd, EventLoop.readable, self)
        self.loop = loop
    }

    private weak var loop: EventLoop?

    public func handle(events: UInt32) {
        var expirations: UInt64 = 0
        guard read(fd, &expirations, 8) == 8 else { return }
        action(expirations)
    }

    public func stop() { loop?.remove(fd) }
}
