#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A plain TCP socket.
public final class SocketTransport: Transport {
    public let fileDescriptor: Int32

    public var isHandshaking: Bool { false }
    /// The kernel holds all unread input, so readiness events announce all of it.
    public var hasBufferedInput: Bool { false }

    /// Over a connected socket made by `SystemCalls` or `ListeningSocket`.
    public init(fileDescriptor: Int32) {
        self.fileDescriptor = fileDescriptor
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
        let count = SystemCalls.receive(fileDescriptor, into: buffer)
        if count > 0 { return .transferred(count) }
        if count == 0 { return .endOfStream }
        switch errno {
        case EAGAIN, EWOULDBLOCK: return .wouldBlock(.readable)
        case let error: return .failed(errno: error)
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
        let count = SystemCalls.send(fileDescriptor, bytes)
        if count >= 0 { return .transferred(count) }
        switch errno {
        case EAGAIN, EWOULDBLOCK: return .wouldBlock(.writable)
        case let error: return .failed(errno: error)
        }
    }

    public func shutdownWrite() {
        SystemCalls.shutdownWrite(fileDescriptor)
    }

}
