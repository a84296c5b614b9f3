import CBenchSys
#if canImport(Glibc)
import Glibc
#endif

/// Something the event loop calls when its file descriptor is ready.
public protocol EventHandler: AnyObject {
    func handle(events: UInt32)
}

/// A single-threaded epoll loop that runs the whole harness (load generator, sinks, watchers,
/// samplers) on the thread that calls `run`, so the harness costs at most one of the two cores
/// and needs no locks: every handler is touched only from that thread.
public final class EventLoop {
    private let epoll: Int32
    private var handlers: [Int32: any EventHandler] = [:]

    public init() throws(BenchError) {
        epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard epoll >= 0 else { throw .system("epoll_create1") }
    }

    deinit { close(epoll) }

    public static let readable = EPOLLIN.rawValue
    public static let writable = EPOLLOUT.rawValue
    public static let hangup = EPOLLHUP.rawValue | EPOLLERR.rawValue | EPOLLRDHUP.rawValue

    public func add(_ fd: Int32, _ events: UInt32, _ handler: any EventHandler) {
        handlers[fd] = handler
        control(EPOLL_CTL_ADD, fd, events)
    }

    public func modify(_ fd: Int32, _ events: UInt32) {
        control(EPOLL_CTL_MOD, fd, events)
    }

    /// Forgets `fd` and closes it.
    public func remove(_ fd: Int32) {
        guard handlers.removeValue(forKey: fd) != nil else { return }
        control(EPOLL_CTL_DEL, fd, 0)
        close(fd)
    }

    private func control(_ operation: Int32, _ fd: Int32, _ events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        _ = epoll_ctl(epoll, operation, fd, &event)
    }

    /// Dispatches events until `done()` is true or `deadline` (monotonic ns) passes; `done` is
    /// checked after every batch and at least every 10 ms.
    public func run(until deadline: UInt64, _ done: () -> Bool) {
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while !done() {
            let now = Monotonic.nanoseconds()
            if now >= deadline { return }
            let count = epoll_wait(epoll, &events, Int32(events.count), 10)
            if count < 0 {
                if errno == EINTR { continue }
                return
            }
            for index in 0..<Int(count) {
                let fd = events[index].data.fd
                handlers[fd]?.handle(events: events[index].events)
            }
        }
    }

    /// Closes every registered descriptor.
    public func removeAll() {
        for fd in Array(handlers.keys) { remove(fd) }
    }
}
