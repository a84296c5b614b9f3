#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The readiness an operation is waiting for. A plain socket read waits for `.readable`; a TLS
/// read may need the socket `.writable` first (a renegotiation or key update in flight).
enum TransportReadiness: Sendable {
    case readable, writable
}

/// The outcome of one non-blocking transport operation.
enum TransportResult: Sendable, Equatable {
    case transferred(Int)
    case wouldBlock(TransportReadiness)
    case endOfStream
    case failed(errno: Int32)
}

/// The byte stream under one connection: the boundary where TLS slots in later.
///
/// A connection drives its transport only from its own serial queue, and only when the file
/// descriptor is ready; a transport never blocks. The descriptor belongs to the transport and
/// is closed by `close()`, which the connection calls exactly once, from the last cancel
/// handler of its dispatch sources.
protocol HTTPTransport: AnyObject {
    /// The descriptor the connection watches for readiness.
    var fileDescriptor: Int32 { get }
    /// Reads decrypted/plain bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult
    /// Writes from `bytes`; may write fewer than offered.
    func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult
    /// Sends end-of-stream (FIN, or close_notify for TLS) while still allowing reads.
    func shutdownWrite()
    func close()
}

/// A plain TCP socket.
final class SocketTransport: HTTPTransport {
    let fileDescriptor: Int32
    private var closed = false

    init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
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
        #if canImport(Glibc)
        let flags = Int32(MSG_NOSIGNAL)
        #else
        let flags: Int32 = 0
        #endif
        while true {
            let count = send(fileDescriptor, bytes.baseAddress, bytes.count, flags)
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

/// `close(2)` and `shutdown(2)` under names no method can shadow.
func systemClose(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(fd)
    #else
    Darwin.close(fd)
    #endif
}

func systemShutdown(_ fd: Int32, _ how: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.shutdown(fd, how)
    #else
    Darwin.shutdown(fd, how)
    #endif
}
