#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opening a listening socket and accepting from it.
public enum ListeningSocket {
    /// A non-blocking, close-on-exec socket bound to `address` and listening; returns it with
    /// the address it is bound to (the real port when `address` asked for port 0).
    public static func open(_ address: HostPort, backlog: Int32) throws(SocketError) -> (fd: Int32, bound: SocketAddress) {
        guard let target = try SystemResolver.resolve(host: address.host, port: address.port, passive: true).first else {
            throw SocketError(.resolutionFailed, "cannot resolve \(address.host)")
        }
        let fd = socket(target.family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SocketError(.socketFailed, "cannot create a socket", errno: errno) }
        SystemCalls.setNonBlockingCloseOnExec(fd)
        var one: Int32 = 1
        // Restarting must not wait for old connections in TIME_WAIT to expire.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if target.withSockAddr({ bind(fd, $0, $1) }) != 0 {
            let error = errno
            SystemCalls.close(fd)
            throw SocketError(.bindFailed, "cannot bind \(address)", errno: error)
        }
        if listenFunction(fd, backlog) != 0 {
            let error = errno
            SystemCalls.close(fd)
            throw SocketError(.listenFailed, "cannot listen on \(address)", errno: error)
        }
        var bound = SocketAddress()
        _ = bound.fill { getsockname(fd, $0, $1) }
        return (fd, bound)
    }

    /// `accept(2)` as a value, so tests can inject failures such as EMFILE.
    public typealias AcceptFunction = @Sendable (Int32, UnsafeMutablePointer<sockaddr>, UnsafeMutablePointer<socklen_t>) -> Int32

    /// The system's accept: `accept4` with non-blocking and close-on-exec set atomically on
    /// Linux (a C shim: Swift's Glibc module leaves out `_GNU_SOURCE` functions).
    public static let systemAccept: AcceptFunction = { acceptNonBlocking($0, $1, $2) }

    /// One `accept` on a non-blocking listener: the new connection's descriptor (non-blocking,
    /// close-on-exec, configured) and peer, or -1 with `errno` set.
    public static func accept(_ listener: Int32, using function: AcceptFunction = systemAccept) -> (fd: Int32, peer: SocketAddress) {
        var peer = SocketAddress()
        let fd = peer.fill { function(listener, $0, $1) }
        if fd >= 0 { SystemCalls.configureStream(fd) }
        return (fd, peer)
    }

    /// Whether a connection is waiting to be accepted, without accepting it.
    public static func hasPendingConnection(_ listener: Int32) -> Bool {
        var descriptor = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0 && descriptor.revents & Int16(POLLIN) != 0
    }

    #if canImport(Glibc)
    private static let listenFunction = Glibc.listen
    #else
    private static let listenFunction = Darwin.listen
    #endif
}
