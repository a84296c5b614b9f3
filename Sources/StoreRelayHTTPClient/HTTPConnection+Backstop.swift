import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A safety net under the socket's dispatch sources while a request is in flight.
///
/// On Linux, libdispatch keeps one epoll entry per descriptor number and can lose it when a
/// socket hangs up (a peer's reset) just as a descriptor number is reused or a source is
/// registered (swift-corelibs-libdispatch issue #833): the source then never fires and the
/// request would hang until its timeout. Seen in tests of servers that answer and reset at
/// once. Every `backstopInterval` this asks the socket itself, with a zero-timeout `poll`,
/// and runs the handler a lost event would have run. The handlers are non-blocking and
/// tolerate spurious calls, so a redundant tick costs one system call.
///
/// A connection the backstop had to rescue in two exchanges in a row is closed after the
/// second instead of being pooled, so a fresh socket registers anew. Benchmarks showed why:
/// in some runs every webhook connection of a freshly started gateway had lost its events,
/// and a pool of such connections delivered one request per tick (20 a second at
/// `concurrency 4` with the 200 ms tick of then) for good. The cause was found later:
/// sources registered before `connect` (see `HTTPConnection.connectNext`); `backstopRescues`
/// counts what is left.
extension HTTPConnection {
    /// Short enough that a lost event (found on the second tick that sees the socket ready)
    /// costs a request a hundred milliseconds, not a visible stall; long enough that an
    /// ordinary exchange (a millisecond or two) never ticks.
    static let backstopInterval = DispatchTimeInterval.milliseconds(50)

    /// Starts ticking (if not already) while connecting or exchanging.
    func startBackstop() {
        dispatchPrecondition(condition: .onQueue(queue))
        guard backstop == nil else { return }
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + Self.backstopInterval, repeating: Self.backstopInterval, leeway: .milliseconds(10))
        timer.setEventHandler { [weak self] in self?.backstopTick() }
        timer.resume()
        backstop = timer
    }

    func stopBackstop() {
        backstop?.cancel()
        backstop = nil
    }

    private func backstopTick() {
        guard let channel, !channel.isClosed else { return stopBackstop() }
        var descriptor = pollfd(fd: channel.fd, events: Int16(POLLIN | POLLOUT), revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return }
        let canRead = descriptor.revents & Int16(POLLIN | POLLHUP | POLLERR) != 0
        let canWrite = descriptor.revents & Int16(POLLOUT) != 0
        // Readiness just arrived may have its source's event queued behind this tick: only
        // readiness that outlived a whole interval with no source firing is a lost event.
        guard backstopSawReady else {
            backstopSawReady = canRead || (canWrite && (state == .connecting || outboundOffset < outbound.count))
            return
        }
        backstopSawReady = false
        client.countRescue()
        switch state {
        case .connecting where canWrite || canRead:
            sourcesMissedEvents = true
            self.writable()
        case .handshaking, .exchanging:
            if canWrite && outboundOffset < outbound.count {
                sourcesMissedEvents = true
                self.writable()
            }
            if canRead && (state == .handshaking || state == .exchanging) {
                sourcesMissedEvents = true
                self.readable()
            }
        default:
            break
        }
    }
}
