import Foundation
import StoreRelayCore
#if canImport(Glibc)
import Glibc
#endif

/// A loopback server that speaks just enough RESP to be taken for Redis, then attacks: it
/// answers the greeting (`HELLO`) with `greeting`, and the first command after it with
/// `attack`, which writes for as long as it likes. It plays a hostile or broken server, not
/// Redis, so a fake is the right tool here (issue 26, point 4).
///
/// One connection, on its own thread, with blocking sockets.
final class HostileRESPServer: @unchecked Sendable {
    // `sent` and `finished` are written by the server thread only; readers go through `state`.
    struct Failure: Error, CustomStringConvertible { let description: String }

    /// Writes bytes to the client until it returns; `send` answers false once the client is gone.
    typealias Attack = @Sendable (_ send: ([UInt8]) -> Bool) -> Void

    let port: UInt16
    private let listener: Int32
    private let state = Locked<(sent: Int, clientClosed: Bool)>((0, false))

    init(greeting: String = "+OK\r\n", attack: @escaping Attack) throws {
        (listener, port) = try Self.listen()
        let thread = Thread { [self] in
            serve(greeting: Array(greeting.utf8), attack: attack)
            close(listener)
        }
        thread.start()
    }

    /// Bytes of the attack written so far (some may still sit in socket buffers).
    var sent: Int { state.current.sent }
    /// Whether a write failed because the client closed the connection.
    var clientClosed: Bool { state.current.clientClosed }

    private func serve(greeting: [UInt8], attack: Attack) {
        let client = accept(listener, nil, nil)
        guard client >= 0 else { return }
        defer { close(client) }
        var chunk = [UInt8](repeating: 0, count: 4096)
        // The greeting: HELLO (and nothing else, as the client is configured).
        guard recv(client, &chunk, chunk.count, 0) > 0, write(client, greeting) else { return }
        // The first command, then the attack.
        guard recv(client, &chunk, chunk.count, 0) > 0 else { return }
        attack { [self] bytes in
            guard write(client, bytes) else {
                state.withLock { $0.clientClosed = true }
                return false
            }
            state.withLock { $0.sent += bytes.count }
            return true
        }
    }

    private func write(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { return false }
            offset += n
        }
        return true
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
        guard bound == 0, Glibc.listen(fd, 4) == 0 else {
            close(fd)
            throw Failure(description: "bind/listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }
}
