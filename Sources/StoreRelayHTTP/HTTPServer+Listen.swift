#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HTTPServer {
    /// Creates the non-blocking, close-on-exec listening socket for `configuration.address`.
    static func listen(_ configuration: HTTPServerConfiguration) throws(HTTPServerError) -> (Int32, SocketAddress) {
        let address = try SocketAddress.resolve(configuration.address)
        let fd = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw HTTPServerError(.socketFailed, "cannot create a socket", errno: errno) }
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        // Restarting must not wait for old connections in TIME_WAIT to expire.
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        if address.withSockAddr({ bind(fd, $0, $1) }) != 0 {
            let error = errno
            _ = systemClose(fd)
            throw HTTPServerError(.bindFailed, "cannot bind \(configuration.address)", errno: error)
        }
        if Glibc.listen(fd, configuration.backlog) != 0 {
            let error = errno
            _ = systemClose(fd)
            throw HTTPServerError(.listenFailed, "cannot listen on \(configuration.address)", errno: error)
        }
        var bound = SocketAddress()
        _ = bound.fill { getsockname(fd, $0, $1) }
        return (fd, bound)
    }
}
