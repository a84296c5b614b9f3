#if canImport(Glibc)
import Glibc
#endif

/// A failed system call in the harness, with its errno: the benchmark stops with this message.
public struct BenchError: Error, CustomStringConvertible {
    public let description: String

    public init(_ message: String) { description = message }

    public static func system(_ call: String) -> BenchError {
        BenchError("\(call): \(String(cString: strerror(errno)))")
    }
}

/// Loopback TCP sockets for the harness: blocking connect and listen, then non-blocking I/O.
public enum Socket {
    /// A connected socket to 127.0.0.1:`port`, non-blocking, Nagle off (requests leave at once).
    public static func connect(port: UInt16) throws(BenchError) -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else {
            let error = BenchError.system("connect 127.0.0.1:\(port)")
            close(fd)
            throw error
        }
        setNoDelay(fd)
        setNonBlocking(fd)
        return fd
    }

    /// A listening socket on 127.0.0.1 and an ephemeral port, non-blocking.
    public static func listen() throws(BenchError) -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw .system("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, Glibc.listen(fd, 1024) == 0 else {
            let error = BenchError.system("bind/listen")
            close(fd)
            throw error
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        setNonBlocking(fd)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A free port on 127.0.0.1 for a child process to listen on (bound, read, released).
    public static func freePort() throws(BenchError) -> UInt16 {
        let (fd, port) = try listen()
        close(fd)
        return port
    }

    public static func setNonBlocking(_ fd: Int32) {
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
    }

    public static func setNoDelay(_ fd: Int32) {
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }

    static func loopback(port: UInt16) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
