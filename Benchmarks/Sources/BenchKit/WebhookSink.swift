#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP server standing in for downstream webhooks: answers every POST `200` at once
/// and records, per path, which `webhook-id` arrived when. Several destinations share one sink
/// and are told apart by their path (`/d0`, `/d1`, ...).
public final class WebhookSink: EventHandler {
    /// One received request: destination (index of its path), webhook id, arrival time.
    public struct Receipt {
        public let destination: Int
        public let id: String
        public let at: UInt64
    }

    public let port: UInt16
    private let fd: Int32
    private unowned let loop: EventLoop
    private let paths: [Substring]
    private let answer: [UInt8]
    public private(set) var receipts: [Receipt] = []
    public private(set) var unknownPaths = 0
    private var connections: [Int32: SinkConnection] = [:]

    /// A sink for `destinations` paths `/d0`...; `answerBody` is what it answers (empty for a
    /// webhook; a gateway-like JSON when it stands in for the gateway in a baseline).
    public init(loop: EventLoop, destinations: Int, answerBody: String = "") throws(BenchError) {
        (fd, port) = try Socket.listen()
        self.loop = loop
        paths = (0..<destinations).map { "/d\($0)" }
        answer = Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(answerBody.utf8.count)\r\n\r\n\(answerBody)".utf8)
        loop.add(fd, EventLoop.readable, self)
    }

    public func path(_ destination: Int) -> String { String(paths[destination]) }

    public func handle(events: UInt32) {
        while true {
            let client = accept(fd, nil, nil)
            // Close-on-exec: a gateway started later must not inherit the sink's connections.
            if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
            guard client >= 0 else { return }
            Socket.setNonBlocking(client)
            Socket.setNoDelay(client)
            connections[client] = SinkConnection(fd: client, sink: self, loop: loop)
        }
    }

    func received(_ message: HTTPMessageFramer.Message, at now: UInt64) -> [UInt8] {
        let target = message.target
        if let destination = paths.firstIndex(of: target) {
            let id = message.header("webhook-id").map(String.init) ?? ""
            receipts.append(Receipt(destination: destination, id: id, at: now))
        } else {
            unknownPaths += 1
        }
        return answer
    }

    func closed(_ fd: Int32) { connections[fd] = nil }

    /// Stops listening and closes every connection.
    public func stop() {
        for fd in Array(connections.keys) { loop.remove(fd) }
        connections.removeAll()
        loop.remove(fd)
    }
}

/// One connection accepted by the sink; answers each request as it completes.
final class SinkConnection: EventHandler {
    private let fd: Int32
    private unowned let sink: WebhookSink
    private unowned let loop: EventLoop
    private var framer = HTTPMessageFramer()
    private var buffer = [UInt8](repeating: 0, count: 65_536)

    init(fd: Int32, sink: WebhookSink, loop: EventLoop) {
        self.fd = fd
        self.sink = sink
        self.loop = loop
        loop.add(fd, EventLoop.readable | EventLoop.hangup, self)
    }

    func handle(events: UInt32) {
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if count > 0 {
                let now = Monotonic.nanoseconds()
                buffer.withUnsafeBytes { framer.append(UnsafeRawBufferPointer(rebasing: $0[0..<count])) }
                do {
                    while let message = try framer.next() {
                        // Answers are ~100 bytes on a fresh socket buffer: one send suffices.
                        let answer = sink.received(message, at: now)
                        _ = answer.withUnsafeBytes { send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
                    }
                } catch {
                    close()
                    return
                }
                if count < buffer.count { return }
            } else if count < 0, errno == EAGAIN || errno == EINTR {
                return
            } else {
                close()
                return
            }
        }
    }

    private func close() {
        loop.remove(fd)
        sink.closed(fd)
    }
}
