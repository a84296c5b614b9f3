import Foundation
import StoreRelayCore

/// A blocking TCP listener on 127.0.0.1 and a free port: what the tests' own small servers
/// accept on.
public struct LoopbackListener: Sendable {
    public let fd: Int32
    public let port: UInt16

    public struct SetupError: Error, CustomStringConvertible {
        public let errno: Int32
        public var description: String { "cannot listen on loopback: errno \(errno)" }
    }

    public init(backlog: Int32 = 16) throws(SetupError) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && listen(fd, backlog) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else {
            let code = errno
            close(fd)
            throw SetupError(errno: code)
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
    }

    /// Accepts on a thread of its own until the listener is shut down, counting connections in
    /// `accepted` and serving each on a thread of its own (`serve` owns the descriptor).
    /// `exited` is signalled when the accept thread returns: close the listener only then, or
    /// its number could be reused by the next test's listener under a thread still accepting.
    public func acceptOnThreads(
        counting accepted: Locked<Int>, exited: DispatchSemaphore, _ serve: @escaping @Sendable (Int32) -> Void
    ) {
        let listener = fd
        Thread.detachNewThread {
            defer { exited.signal() }
            while true {
                let connection = accept(listener, nil, nil)
                if connection < 0 { return }
                accepted.withLock { $0 += 1 }
                Thread.detachNewThread { serve(connection) }
            }
        }
    }
}
