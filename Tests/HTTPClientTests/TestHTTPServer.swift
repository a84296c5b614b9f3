import Foundation
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport

/// A small blocking loopback HTTP(S) server for tests: an accept thread, one thread per
/// connection running the test's handler. Counts accepted connections.
final class TestHTTPServer: Sendable {
    let port: UInt16
    let accepted = Locked(0)
    private let listener: Int32
    /// Signalled when the accept thread has returned. `stop` closes the listener only then:
    /// closed earlier, its descriptor number could be reused by the next test's listener,
    /// and this thread's next `accept` would take that test's connections.
    private let acceptExited = DispatchSemaphore(value: 0)
    private let stopped = Locked(false)

    init(tls: TLSServerContext? = nil, backlog: Int32 = 64, acceptConnections: Bool = true,
         handler: @escaping @Sendable (TestConnection) throws -> Void) throws {
        let loopback: LoopbackListener
        do {
            loopback = try LoopbackListener(backlog: backlog)
        } catch {
            throw TestServerError.setup("cannot listen: errno \(error.errno)")
        }
        let listener = loopback.fd
        self.listener = listener
        port = loopback.port
        guard acceptConnections else {
            acceptExited.signal()
            return
        }
        loopback.acceptOnThreads(counting: accepted, exited: acceptExited) { fd in
            let connection = TestConnection(fd: fd)
            defer { connection.close() }
            do {
                if let tls { try connection.startTLS(tls) }
                try handler(connection)
            } catch {}
        }
    }

    var acceptedCount: Int { accepted.current }

    /// Stops accepting (a shut-down listener fails `accept` at once), then closes it.
    func stop() {
        guard !stopped.withLock({ stopped in defer { stopped = true }; return stopped }) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        acceptExited.wait()
        close(listener)
    }
}

enum TestServerError: Error {
    case setup(String)
    case closed
}

/// One request as the test server read it.
struct TestRequest {
    var method: String
    var target: String
    var headers: [String: String]
    var body: [UInt8]
}

/// One accepted connection, plain or TLS, with blocking reads and writes.
final class TestConnection: @unchecked Sendable {
    // Used by one handler thread only.
    let fd: Int32
    private var tls: TLSConnection?
    private var buffer: [UInt8] = []
    private var isClosed = false
    private(set) var serverName: String?

    init(fd: Int32) {
        self.fd = fd
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    func startTLS(_ context: TLSServerContext) throws {
        let tls = try context.makeConnection()
        while try !tls.handshake() {
            sendRaw(tls.takeCiphertext())
            guard let bytes = receiveRaw() else { throw TestServerError.closed }
            tls.receiveCiphertext(bytes)
        }
        sendRaw(tls.takeCiphertext())
        serverName = tls.requestedServerName
        self.tls = tls
    }

    /// Reads one request (head, then a Content-Length body); nil when the client closed.
    func readRequest() -> TestRequest? {
        while true {
            if let end = find([13, 10, 13, 10]) {
                let head = String(decoding: buffer[..<end], as: UTF8.self)
                var lines = head.components(separatedBy: "\r\n")
                let requestLine = lines.removeFirst().split(separator: " ")
                var headers: [String: String] = [:]
                for line in lines {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = Int(headers["content-length"] ?? "0") ?? 0
                while buffer.count < end + 4 + length {
                    guard readMore() else { return nil }
                }
                let body = Array(buffer[(end + 4)..<(end + 4 + length)])
                buffer.removeFirst(end + 4 + length)
                return TestRequest(
                    method: String(requestLine.first ?? ""), target: String(requestLine.dropFirst().first ?? ""),
                    headers: headers, body: body)
            }
            guard readMore() else { return nil }
        }
    }

    func write(_ text: String) { write(Array(text.utf8)) }

    func write(_ bytes: [UInt8]) {
        if let tls {
            try? tls.writePlaintext(bytes)
            sendRaw(tls.takeCiphertext())
        } else {
            sendRaw(bytes)
        }
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        if let tls {
            tls.close()
            sendRaw(tls.takeCiphertext())
        }
        Glibc.close(fd)
    }

    /// Closes with a TCP reset (linger 0) instead of a FIN.
    func reset() {
        var linger = Glibc.linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &linger, socklen_t(MemoryLayout<Glibc.linger>.size))
        close()
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        for index in 0...(buffer.count - pattern.count) where buffer[index..<index + pattern.count].elementsEqual(pattern) {
            return index
        }
        return nil
    }

    /// Adds at least one byte to `buffer`, or returns false at the end of the stream.
    private func readMore() -> Bool {
        guard let tls else {
            guard let bytes = receiveRaw() else { return false }
            buffer += bytes
            return true
        }
        // The client's first request often arrives with its last handshake message, so it
        // may already sit in the engine: decrypt before waiting on the socket.
        while true {
            let before = buffer.count
            guard let status = try? tls.readPlaintext(into: &buffer) else { return false }
            sendRaw(tls.takeCiphertext())
            if buffer.count > before { return true }
            if status == .closed { return false }
            guard let bytes = receiveRaw() else { return false }
            tls.receiveCiphertext(bytes)
        }
    }

    private func receiveRaw() -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 16 * 1024)
        let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(chunk[..<count]) : nil
    }

    private func sendRaw(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }
}
