import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A loopback listener on port 0 that accepts one connection on its own thread, reads one
/// request (head plus Content-Length body), sends a canned answer and closes. Enough to see
/// exactly what the simulator puts on the wire.
final class OneShotServer: @unchecked Sendable {
    // `captured` is written once by the server thread before `done` is signalled, and read
    // only after waiting on `done`: the semaphore orders the two.
    let port: UInt16
    private let listener: Int32
    private let done = DispatchSemaphore(value: 0)
    private var captured: Result<String, any Error> = .success("")

    struct Failure: Error, CustomStringConvertible { let description: String }

    init(answer: String) throws {
        (listener, port) = try Self.listen()
        let thread = Thread { [self] in
            captured = Result { try serve(answer) }
            close(listener)
            done.signal()
        }
        thread.start()
    }

    /// The request as received; waits for the exchange to finish (bounded by a deadline).
    func request() throws -> String {
        guard done.wait(timeout: .now() + 20) == .success else { throw Failure(description: "the server never finished") }
        return try captured.get()
    }

    /// A port that was free a moment ago and has no listener now.
    static func unusedPort() throws -> UInt16 {
        let (fd, port) = try listen()
        close(fd)
        return port
    }

    private func serve(_ answer: String) throws -> String {
        let client = accept(listener, nil, nil)
        guard client >= 0 else { throw Failure(description: "accept failed") }
        defer { close(client) }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while !Self.complete(received) {
            let n = recv(client, &chunk, chunk.count, 0)
            guard n > 0 else { break }
            received.append(contentsOf: chunk[0..<n])
        }
        let bytes = Array(answer.utf8)
        _ = bytes.withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return String(decoding: received, as: UTF8.self)
    }

    private static func complete(_ bytes: [UInt8]) -> Bool {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let headEnd = text.range(of: "\r\n\r\n") else { return false }
        let head = text[..<headEnd.lowerBound].lowercased()
        let length = head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
            .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
        return text.utf8.count - text[..<headEnd.upperBound].utf8.count >= length
    }

    private static func listen() throws -> (Int32, UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket failed") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 4) == 0 else { close(fd); throw Failure(description: "bind/listen failed") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}
