#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a raw client call failed.
public enum RawHTTPClientError: Error, CustomStringConvertible {
    case connectFailed(errno: Int32)
    case timedOut
    /// The peer closed (or reset) before a complete response.
    case closed(partial: [UInt8])
    case malformedResponse(String)
    case ioFailed(errno: Int32)

    public var description: String {
        switch self {
        case .connectFailed(let e): "connect failed: \(String(cString: strerror(e)))"
        case .timedOut: "timed out"
        case .closed(let partial): "closed by peer after \(partial.count) bytes"
        case .malformedResponse(let why): "malformed response: \(why)"
        case .ioFailed(let e): "I/O failed: \(String(cString: strerror(e)))"
        }
    }
}

/// A response as read off the wire by `RawHTTPClient`.
public struct RawHTTPResponse: Sendable {
    public var version: String
    public var status: Int
    public var reason: String
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    /// The first value of `name`, ignoring case.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    public var bodyText: String { String(decoding: body, as: UTF8.self) }
}

/// A small blocking-socket HTTP/1.1 client for tests: exact bytes out, responses parsed back,
/// every read and write bounded by a timeout so a misbehaving server fails the test instead
/// of hanging it. Not thread-safe; use one per task.
public final class RawHTTPClient {
    public let fileDescriptor: Int32
    private var buffer: [UInt8] = []
    private var isClosed = false
    private let timeout: Double

    /// Connects to `host` (an IPv4 or IPv6 literal) on `port`; from the IPv4 address `source`
    /// when given (any of 127.0.0.0/8 works on loopback: a second client address).
    public init(host: String = "127.0.0.1", port: Int, timeout: Double = 5, source: String? = nil) throws {
        self.timeout = timeout
        let isV6 = host.contains(":")
        let fd = socket(isV6 ? AF_INET6 : AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RawHTTPClientError.connectFailed(errno: errno) }
        var tv = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - Double(Int(timeout))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        if let source, !isV6 {
            var local = sockaddr_in()
            local.sin_family = sa_family_t(AF_INET)
            inet_pton(AF_INET, source, &local.sin_addr)
            let bound = withUnsafePointer(to: &local) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0 else {
                let error = errno
                _ = Glibc.close(fd)
                throw RawHTTPClientError.connectFailed(errno: error)
            }
        }
        let result: Int32
        if isV6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_port = UInt16(port).bigEndian
            inet_pton(AF_INET6, host, &address.sin6_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = UInt16(port).bigEndian
            inet_pton(AF_INET, host, &address.sin_addr)
            result = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        guard result == 0 else {
            let error = errno
            _ = Glibc.close(fd)
            throw RawHTTPClientError.connectFailed(errno: error)
        }
        fileDescriptor = fd
    }

    deinit { close() }

    /// A request with `Host` and, when there is a body, `Content-Length`.
    public static func request(
        _ method: String, _ target: String, headers: [(String, String)] = [], body: String? = nil
    ) -> String {
        var text = "\(method) \(target) HTTP/1.1\r\nHost: localhost\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body { text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body } else { text += "\r\n" }
        return text
    }

    public func send(_ text: String) throws { try send(Array(text.utf8)) }

    public func send(_ bytes: [UInt8]) throws {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { Glibc.send(fileDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw errno == EAGAIN ? RawHTTPClientError.timedOut : RawHTTPClientError.ioFailed(errno: errno)
            }
            offset += n
        }
    }

    /// Sends FIN; responses can still be read.
    public func shutdownWrite() { _ = Glibc.shutdown(fileDescriptor, Int32(SHUT_WR)) }

    public func close() {
        guard !isClosed else { return }
        isClosed = true
        _ = Glibc.close(fileDescriptor)
    }

    /// Reads one response (a `100 Continue` counts as one). `forHead`: no body follows.
    public func readResponse(forHead: Bool = false) throws -> RawHTTPResponse {
        var headEnd: Int?
        while headEnd == nil {
            headEnd = Self.find([13, 10, 13, 10], in: buffer).map { $0 + 4 }
            if headEnd == nil { try fill() }
        }
        let lines = buffer[..<(headEnd! - 4)].split(separator: 10, omittingEmptySubsequences: false)
            .map { String(decoding: $0.last == 13 ? $0.dropLast() : $0, as: UTF8.self) }
        let statusParts = lines[0].split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else {
            throw RawHTTPClientError.malformedResponse("status line '\(lines[0])'")
        }
        var response = RawHTTPResponse(
            version: String(statusParts[0]), status: status,
            reason: statusParts.count > 2 ? String(statusParts[2]) : "", headers: [], body: [])
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { throw RawHTTPClientError.malformedResponse("header '\(line)'") }
            response.headers.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingSpaces()))
        }
        buffer.removeFirst(headEnd!)
        if forHead || (100..<200).contains(status) || status == 204 || status == 304 { return response }
        if let length = response.header("Content-Length").flatMap(Int.init) {
            while buffer.count < length { try fill() }
            response.body = Array(buffer[..<length])
            buffer.removeFirst(length)
        } else {
            response.body = try readUntilClosed()
        }
        return response
    }

    /// Everything until the peer closes.
    public func readUntilClosed() throws -> [UInt8] {
        while true {
            do { try fill() } catch RawHTTPClientError.closed(let partial) {
                buffer = []
                return partial
            }
        }
    }

    /// Whether the peer closes (EOF or reset) within `seconds`, discarding any data received.
    public func waitForClose(within seconds: Double) -> Bool {
        let deadline = Self.now() + seconds
        while Self.now() < deadline {
            var fds = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&fds, 1, Int32(max(1, (deadline - Self.now()) * 1000)))
            guard ready > 0 else { continue }
            var scratch = [UInt8](repeating: 0, count: 4096)
            let n = recv(fileDescriptor, &scratch, scratch.count, 0)
            if n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN) { return true }
            if n > 0 { buffer.append(contentsOf: scratch[..<n]) }
        }
        return false
    }

    /// Whether any byte arrives (or the peer closes) within `seconds`; nothing is consumed.
    public func hasActivity(within seconds: Double) -> Bool {
        if !buffer.isEmpty { return true }
        var fds = pollfd(fd: fileDescriptor, events: Int16(POLLIN), revents: 0)
        return poll(&fds, 1, Int32(seconds * 1000)) > 0
    }

    private func fill() throws {
        var scratch = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = recv(fileDescriptor, &scratch, scratch.count, 0)
            if n > 0 {
                buffer.append(contentsOf: scratch[..<n])
                return
            }
            if n == 0 { throw RawHTTPClientError.closed(partial: buffer) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { throw RawHTTPClientError.timedOut }
            if errno == ECONNRESET { throw RawHTTPClientError.closed(partial: buffer) }
            throw RawHTTPClientError.ioFailed(errno: errno)
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        return (0...(haystack.count - needle.count)).first { haystack[$0..<($0 + needle.count)].elementsEqual(needle) }
    }

    private static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
