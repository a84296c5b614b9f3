import Foundation
import StoreRelayCore
import StoreRelayNet
import StoreRelayTestSupport

/// A tiny loopback HTTPS server for tests: blocking sockets on a background thread, with the
/// TLS done by `TLSConnection` in server mode. It answers every request with a fixed response
/// and records, per connection, the SNI name asked for or the handshake error.
final class TLSEchoServer: Sendable {
    enum Outcome: Sendable {
        case served(serverName: String?, protocolVersion: String?)
        case failed(TLSError)
    }

    let port: UInt16
    let outcomes = Locked<[Outcome]>([])
    private let listener: Int32

    init(context: TLSServerContext) throws {
        guard let loopback = try? LoopbackListener() else { throw TLSError(.io, "cannot listen on loopback") }
        let listener = loopback.fd
        self.listener = listener
        port = loopback.port
        let outcomes = self.outcomes
        Thread.detachNewThread {
            while true {
                let fd = accept(listener, nil, nil)
                if fd < 0 { return }
                Thread.detachNewThread {
                    outcomes.withLock { $0.append(Self.serve(fd, context: context)) }
                    close(fd)
                }
            }
        }
    }

    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    /// Handshake, read one request head, answer, close_notify.
    private static func serve(_ fd: Int32, context: TLSServerContext) -> Outcome {
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let tls: TLSConnection
        do {
            tls = try context.makeConnection()
        } catch {
            return .failed(error)
        }
        do {
            while try !tls.handshake() {
                sendAll(fd, tls.takeCiphertext())
                guard let bytes = receive(fd) else { throw TLSError(.io, "peer closed during handshake") }
                tls.receiveCiphertext(bytes)
            }
            sendAll(fd, tls.takeCiphertext())
            var request: [UInt8] = []
            while !request.ends(with: [13, 10, 13, 10]) {
                if try tls.readPlaintext(into: &request) == .closed { break }
                if request.ends(with: [13, 10, 13, 10]) { break }
                guard let bytes = receive(fd) else { break }
                tls.receiveCiphertext(bytes)
            }
            try tls.writePlaintext(Array("HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n".utf8))
            tls.close()
            sendAll(fd, tls.takeCiphertext())
            return .served(serverName: tls.requestedServerName, protocolVersion: tls.protocolVersion)
        } catch let error as TLSError {
            sendAll(fd, tls.takeCiphertext())  // the alert tells the client why
            return .failed(error)
        } catch {
            return .failed(TLSError(.io, "\(error)"))
        }
    }

    private static func receive(_ fd: Int32) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        return count > 0 ? Array(buffer[..<count]) : nil
    }

    private static func sendAll(_ fd: Int32, _ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return }
            offset += sent
        }
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix }
}
