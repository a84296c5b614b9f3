#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP socket.
final class SocketTransport: HTTPTransport {
    let fileDescriptor: Int32
    private var closed = false

    var isHandshaking: Bool { false }
    /// The kernel holds all unread input, so readiness events announce all of it.
    var hasBufferedInput: Bool { false }

    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
        Self.configureAccepted(fileDescriptor)
    }

    /// Socket options every accepted connection gets, plain or TLS.
    static func configureAccepted(_ fileDescriptor: Int32) {
        var one: Int32 = 1
        // Answers go out in one write; Nagle would hold a pipelined second answer for an ACK.
        setsockopt(fileDescriptor, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
        setsockopt(fileDescriptor, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
        while true {
            let count = recv(fileDescriptor, buffer.baseAddress, buffer.count, 0)
            if count > 0 { return .transferred(count) }
            if count == 0 { return .endOfStream }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock(.readable)
            case let error: return .failed(errno: error)
            }
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
        while true {
            let count = send(fileDescriptor, bytes.baseAddress, bytes.count, sendFlags)
            if count >= 0 { return .transferred(count) }
            switch errno {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock(.writable)
            case let error: return .failed(errno: error)
            }
        }
    }

    func shutdownWrite() {
        _ = systemShutdown(fileDescriptor, Int32(SHUT_WR))
    }

    func close() {
        guard !closed else { return }
        closed = true
        _ = systemClose(fileDescriptor)
    }
}
