#if canImport(Glibc)
import Glibc
#endif

/// One-shot blocking HTTP requests for set-up only (is the gateway ready?), never on a
/// measured path.
public enum BlockingHTTP {
    /// The status of `GET path` on 127.0.0.1:`port`, nil if nothing answers.
    public static func getStatus(port: UInt16, path: String) -> Int? {
        get(port: port, path: path)?.status
    }

    /// The body of `GET path` on 127.0.0.1:`port` as text, nil if nothing answers.
    public static func getText(port: UInt16, path: String) -> String? {
        get(port: port, path: path).map { String(decoding: $0.body, as: UTF8.self) }
    }

    private static func get(port: UInt16, path: String) -> HTTPMessageFramer.Message? {
        guard let fd = try? Socket.connect(port: port) else { return nil }
        defer { close(fd) }
        let flags = fcntl(fd, F_GETFL)
        _ = fcntl(fd, F_SETFL, flags & ~O_NONBLOCK)
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".utf8)
        guard send(fd, request, request.count, Int32(MSG_NOSIGNAL)) == request.count else { return nil }
        var framer = HTTPMessageFramer()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            guard count > 0 else { return nil }
            buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
            if let message = try? framer.next() { return message }
        }
    }

    /// Polls until `GET path` answers `status`, or fails after `timeout` seconds.
    public static func waitFor(port: UInt16, path: String, status: Int = 200, timeout: Double = 20, process: ChildProcess? = nil) throws(BenchError) {
        let deadline = Monotonic.nanoseconds() + UInt64(timeout * 1e9)
        while Monotonic.nanoseconds() < deadline {
            if getStatus(port: port, path: path) == status { return }
            if let process, process.hasExited { throw BenchError("\(process.command) exited before it was ready") }
            // Fine enough to time a start of a few tens of milliseconds.
            usleep(5_000)
        }
        throw BenchError("nothing answered GET \(path) with \(status) on port \(port) within \(timeout) s")
    }
}
