import Foundation
import StoreRelayCore
import StoreRelayTestSupport

/// A loopback TCP peer for the outbound driver's tests: blocking sockets on background
/// threads, listening on port 0. Each accepted connection runs `serve` with its descriptor,
/// then is closed.
final class LoopbackPeer: Sendable {
    let port: UInt16
    let accepted = Locked(0)
    private let listener: Int32
    /// Signalled when the accept thread returned: only then is the listener closed, so its
    /// descriptor number cannot be reused under a thread still accepting on it.
    private let acceptExited = DispatchSemaphore(value: 0)

    init(serve: @escaping @Sendable (Int32) -> Void) throws {
        let loopback = try LoopbackListener()
        listener = loopback.fd
        port = loopback.port
        loopback.acceptOnThreads(counting: accepted, exited: acceptExited) { fd in
            serve(fd)
            close(fd)
        }
    }

    /// Stops accepting (a shut-down listener fails `accept` at once), then closes it.
    func stop() {
        shutdown(listener, Int32(SHUT_RDWR))
        acceptExited.wait()
        close(listener)
    }

    /// Sends back every byte until the client closes.
    static func echo(_ fd: Int32) {
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            guard sendAll(fd, buffer[..<count]) else { return }
        }
    }

    @discardableResult
    static func sendAll(_ fd: Int32, _ bytes: ArraySlice<UInt8>) -> Bool {
        var offset = bytes.startIndex
        while offset < bytes.endIndex {
            let sent = bytes[offset...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent <= 0 { return false }
            offset += sent
        }
        return true
    }
}
