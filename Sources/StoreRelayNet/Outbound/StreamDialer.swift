#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bookkeeping of dialing one outbound TCP stream: the resolved addresses still to try,
/// and why each one tried so far failed, so "try each address in turn, then fail with every
/// reason" is written once. It makes the system calls; `OutboundConnection` owns the socket's
/// `SocketChannel` (created right after `connect`, see `dial`) and tells the dialer when it
/// became writable.
struct StreamDialer: Sendable {
    /// What the connection must do next.
    enum Step: Sendable {
        /// The socket is connected (a loopback connect can finish at once).
        case connected(fd: Int32)
        /// The connect is in progress: wait for the socket to become writable, then `finish`.
        /// `alreadyDone`: it ended before any source could be registered, so ask `finish` now.
        case inProgress(fd: Int32, alreadyDone: Bool)
        /// Every address failed; `reason` names each with its error.
        case failed(reason: String, errno: Int32?)
    }

    private var addresses: [SocketAddress]
    private var current: SocketAddress?
    private var failures: [String] = []
    private var lastErrno: Int32?

    init(addresses: [SocketAddress]) {
        self.addresses = addresses
    }

    /// Starts connecting to the next address. Connect first, register sources after: an
    /// unconnected TCP socket polls as hung up (EPOLLHUP), and libdispatch drops a descriptor's
    /// epoll entry when it sees that (swift-corelibs-libdispatch #833), so sources registered
    /// before `connect` lost their events on a good share of fresh connections.
    mutating func dial() -> Step {
        while let address = addresses.first {
            addresses.removeFirst()
            current = address
            let fd = SystemCalls.makeStreamSocket(family: address.family)
            guard fd >= 0 else {
                record(errno)
                continue
            }
            let result = SystemCalls.connect(fd, to: address)
            if result == 0 { return .connected(fd: fd) }
            guard errno == EINPROGRESS else {
                record(errno)
                SystemCalls.close(fd)
                continue
            }
            // A socket that hung up before its sources were registered never wakes them (#833
            // again): a refusal on loopback is that fast, so that one case is asked directly.
            return .inProgress(fd: fd, alreadyDone: SystemCalls.isWritableOrFailed(fd))
        }
        return .failed(reason: failures.joined(separator: "; "), errno: lastErrno)
    }

    /// The socket of an in-progress connect became writable: whether it is connected. When it
    /// is not, the reason is recorded; the connection closes that socket's channel and dials again.
    mutating func finish(fd: Int32) -> Bool {
        let code = SystemCalls.pendingError(fd)
        if code == 0 { return true }
        record(code)
        return false
    }

    private mutating func record(_ code: Int32) {
        lastErrno = code
        failures.append("\(current.map(String.init(describing:)) ?? "?"): \(String(cString: strerror(code)))")
    }
}
