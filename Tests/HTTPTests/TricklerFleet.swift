import Foundation
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// The slow-client attack of issue 25 on loopback: from each source address, `perSource`
/// connections that send a head announcing a body, then one body byte a second, and are
/// re-opened as soon as the server closes them. One thread polls every socket (non-blocking),
/// so the fleet costs one thread however large it is.
///
/// `@unchecked Sendable` invariant: `slots` is touched only by the fleet's thread; the rest is
/// `Locked` or immutable.
final class TricklerFleet: @unchecked Sendable {
    struct Counts: Sendable {
        /// Connections established.
        var connected = 0
        /// Connections the server closed (shed, refused, or after an answer).
        var closedByServer = 0
        /// Answers received (a 408 for a trickler too slow).
        var answers = 0
    }

    private enum Phase { case closed, connecting, trickling }

    private struct Slot {
        let source: String
        var fd: Int32 = -1
        var phase = Phase.closed
        var nextByte: UInt64 = 0
    }

    private let port: UInt16
    private let head: [UInt8]
    private var slots: [Slot]
    private let stopping = Locked(false)
    private let stopped = Locked(false)
    private let counts = Locked(Counts())

    init(port: Int, sources: [String], perSource: Int, contentLength: Int = 100_000) {
        self.port = UInt16(port)
        head = Array("POST /trickle HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(contentLength)\r\n\r\n".utf8)
        slots = sources.flatMap { source in (0..<perSource).map { _ in Slot(source: source) } }
    }

    var current: Counts { counts.current }

    func start() {
        let thread = Thread { [self] in run() }
        thread.name = "trickler-fleet"
        thread.start()
    }

    /// Stops the thread and closes every socket; returns once done.
    func stop() {
        stopping.withLock { $0 = true }
        while !stopped.current { usleep(5_000) }
    }

    private func run() {
        var fds = [pollfd](repeating: pollfd(), count: slots.count)
        var scratch = [UInt8](repeating: 0, count: 4096)
        while !stopping.current {
            let now = MonotonicClock.nanoseconds()
            for index in slots.indices {
                if slots[index].phase == .closed { open(index) }
                if slots[index].phase == .trickling && now >= slots[index].nextByte {
                    slots[index].nextByte = now + 1_000_000_000
                    var byte: UInt8 = UInt8(ascii: "x")
                    if send(slots[index].fd, &byte, 1, Int32(MSG_NOSIGNAL)) < 0 && errno != EAGAIN { closedByServer(index) }
                }
                let phase = slots[index].phase
                fds[index] = pollfd(fd: phase == .closed ? -1 : slots[index].fd,
                                    events: Int16(phase == .connecting ? POLLOUT : POLLIN), revents: 0)
            }
            guard poll(&fds, nfds_t(fds.count), 20) > 0 else { continue }
            for index in slots.indices where fds[index].revents != 0 {
                switch slots[index].phase {
                case .closed:
                    break
                case .connecting:
                    var error: Int32 = 0
                    var length = socklen_t(MemoryLayout<Int32>.size)
                    getsockopt(slots[index].fd, SOL_SOCKET, SO_ERROR, &error, &length)
                    guard error == 0, send(slots[index].fd, head, head.count, Int32(MSG_NOSIGNAL)) == head.count else {
                        closedByServer(index)
                        continue
                    }
                    slots[index].phase = .trickling
                    slots[index].nextByte = MonotonicClock.nanoseconds() + 1_000_000_000
                    counts.withLock { $0.connected += 1 }
                case .trickling:
                    let count = recv(slots[index].fd, &scratch, scratch.count, 0)
                    if count > 0 {
                        if scratch.starts(with: Array("HTTP/1.1 ".utf8)) { counts.withLock { $0.answers += 1 } }
                    } else if count == 0 || errno != EAGAIN {
                        closedByServer(index)
                    }
                }
            }
        }
        for index in slots.indices where slots[index].fd >= 0 { reset(index) }
        stopped.withLock { $0 = true }
    }

    /// A non-blocking connect from the slot's source address.
    private func open(_ index: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { return }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        inet_pton(AF_INET, slots[index].source, &local.sin_addr)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        inet_pton(AF_INET, "127.0.0.1", &remote.sin_addr)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 || errno == EINPROGRESS else {
            _ = Glibc.close(fd)
            return
        }
        slots[index].fd = fd
        slots[index].phase = .connecting
    }

    private func closedByServer(_ index: Int) {
        if slots[index].phase == .trickling { counts.withLock { $0.closedByServer += 1 } }
        reset(index)
    }

    /// Closes with a reset (SO_LINGER 0): re-opening at once leaves no TIME_WAIT behind.
    private func reset(_ index: Int) {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(slots[index].fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        _ = Glibc.close(slots[index].fd)
        slots[index].fd = -1
        slots[index].phase = .closed
    }
}
