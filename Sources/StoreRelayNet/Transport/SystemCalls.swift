#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The socket system calls StoreRelay makes, under names no method can shadow, each written
/// once for Linux and Darwin, and retried on `EINTR` where a retry is the right answer.
public enum SystemCalls {
    /// A TCP socket for `family`: non-blocking, close-on-exec, Nagle off (StoreRelay writes
    /// requests and answers whole; Nagle would hold a pipelined second one for an ACK), and on
    /// Darwin no SIGPIPE. -1 with `errno` set on failure.
    public static func makeStreamSocket(family: Int32) -> Int32 {
        #if canImport(Glibc)
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        #else
        let fd = socket(family, SOCK_STREAM, 0)
        if fd >= 0 { setNonBlockingCloseOnExec(fd) }
        #endif
        if fd >= 0 { configureStream(fd) }
        return fd
    }

    /// Options every connected TCP socket gets, made here or accepted.
    public static func configureStream(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    static func setNonBlockingCloseOnExec(_ fd: Int32) {
        _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    /// `close(2)`. Never retried on EINTR: on Linux the descriptor is released either way, and
    /// a retry could close a descriptor another thread has just been given.
    @discardableResult
    public static func close(_ fd: Int32) -> Int32 {
        #if canImport(Glibc)
        Glibc.close(fd)
        #else
        Darwin.close(fd)
        #endif
    }

    /// `shutdown(fd, SHUT_WR)`: sends FIN, keeps reading.
    public static func shutdownWrite(_ fd: Int32) {
        #if canImport(Glibc)
        _ = Glibc.shutdown(fd, Int32(SHUT_WR))
        #else
        _ = Darwin.shutdown(fd, SHUT_WR)
        #endif
    }

    /// `send(2)` without SIGPIPE, retried on EINTR: the count sent, or -1 with `errno` set.
    public static func send(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        while true {
            let count = sendFunction(fd, bytes.baseAddress, bytes.count, flags)
            if count >= 0 || errno != EINTR { return count }
        }
    }

    /// `recv(2)`, retried on EINTR: the count read (0 at end of stream), or -1 with `errno` set.
    public static func receive(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer) -> Int {
        while true {
            let count = recvFunction(fd, buffer.baseAddress, buffer.count, 0)
            if count >= 0 || errno != EINTR { return count }
        }
    }

    /// The pending error of a socket (`SO_ERROR`): how a non-blocking connect ended.
    public static func pendingError(_ fd: Int32) -> Int32 {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &code, &length)
        return code
    }

    /// Whether the socket is writable or has hung up or failed right now (a zero-timeout
    /// `poll`): a connect that ended before the socket's sources were registered.
    public static func isWritableOrFailed(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return false }
        return descriptor.revents & Int16(POLLOUT | POLLERR | POLLHUP) != 0
    }

    /// Starts a non-blocking connect: 0 when connected at once, else -1 with `errno`
    /// (EINPROGRESS: the socket turns writable when it ends).
    public static func connect(_ fd: Int32, to address: SocketAddress) -> Int32 {
        address.withSockAddr { pointer, length in
            #if canImport(Glibc)
            Glibc.connect(fd, pointer, length)
            #else
            Darwin.connect(fd, pointer, length)
            #endif
        }
    }

    #if canImport(Glibc)
    private static let sendFunction = Glibc.send
    private static let recvFunction = Glibc.recv
    #else
    private static let sendFunction = Darwin.send
    private static let recvFunction = Darwin.recv
    #endif
}
