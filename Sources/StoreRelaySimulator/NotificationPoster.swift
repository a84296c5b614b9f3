#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Posts one notification body the way Apple does (`POST`, `Content-Type: application/json`)
/// and returns the answer.
///
/// A small blocking HTTP/1.1 client over a plain socket, acceptable here because
/// `storerelay simulate` is a one-shot command: one request, `Connection: close`, read to the
/// end, with send and receive timeouts so a silent gateway cannot hang it.
public struct NotificationPoster: Sendable {
    public var timeoutSeconds: Int
    /// The most of an answer that is read; a gateway's answers are a few hundred bytes.
    public var maxAnswerBytes = 1 << 20

    public init(timeoutSeconds: Int = 30) {
        self.timeoutSeconds = timeoutSeconds
    }

    public func post(_ body: String, to target: PostTarget) throws(SimulatorError) -> HTTPAnswer {
        let payload = Array(body.utf8)
        let head = "POST \(target.path) HTTP/1.1\r\n"
            + "Host: \(target.hostHeader)\r\n"
            + "User-Agent: StoreRelay-Simulator\r\n"
            + "Content-Type: application/json\r\n"
            + "Content-Length: \(payload.count)\r\n"
            + "Connection: close\r\n\r\n"
        let fd = try openConnection(target)
        defer { close(fd) }
        try sendAll(Array(head.utf8) + payload, fd: fd, target: target)
        // Half-close: the gateway sees the request is complete, and we still read its answer.
        shutdown(fd, Int32(SHUT_WR))
        return try HTTPAnswer.parse(receiveAll(fd: fd, target: target))
    }

    private func openConnection(_ target: PostTarget) throws(SimulatorError) -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(target.host, String(target.port), &hints, &list)
        guard status == 0, let list else {
            throw SimulatorError(.delivery, "cannot resolve \(target.host): \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(list) }
        var lastError = ECONNREFUSED
        var entry: UnsafeMutablePointer<addrinfo>? = list
        while let address = entry {
            entry = address.pointee.ai_next
            let fd = socket(address.pointee.ai_family, address.pointee.ai_socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.ai_protocol)
            guard fd >= 0 else { lastError = errno; continue }
            // On Linux SO_SNDTIMEO also bounds connect(2).
            var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            if connect(fd, address.pointee.ai_addr, address.pointee.ai_addrlen) == 0 { return fd }
            lastError = errno
            close(fd)
        }
        throw SimulatorError(.delivery, "cannot connect to \(target.hostHeader): \(String(cString: strerror(lastError)))")
    }

    private func sendAll(_ bytes: [UInt8], fd: Int32, target: PostTarget) throws(SimulatorError) {
        var offset = 0
        while offset < bytes.count {
            // MSG_NOSIGNAL: a gateway that closes early must give an error, not kill us (SIGPIPE).
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else {
                throw SimulatorError(.delivery, "cannot send the notification to \(target.hostHeader): \(String(cString: strerror(errno)))")
            }
            offset += n
        }
    }

    private func receiveAll(fd: Int32, target: PostTarget) throws(SimulatorError) -> [UInt8] {
        var answer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16384)
        while answer.count < maxAnswerBytes {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                let reason = errno == EAGAIN || errno == EWOULDBLOCK ? "no answer within \(timeoutSeconds) s" : String(cString: strerror(errno))
                throw SimulatorError(.delivery, "cannot read the answer of \(target.hostHeader): \(reason)")
            }
            if n == 0 { break }
            answer.append(contentsOf: chunk[0..<n])
        }
        return answer
    }
}
