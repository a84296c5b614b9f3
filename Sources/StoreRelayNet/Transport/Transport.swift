#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The readiness an operation is waiting for. A plain socket read waits for `.readable`; a TLS
/// read may need the socket `.writable` first (a renegotiation or key update in flight).
public enum TransportReadiness: Sendable {
    case readable, writable
}

/// The outcome of one non-blocking transport operation.
public enum TransportResult: Sendable, Equatable {
    case transferred(Int)
    case wouldBlock(TransportReadiness)
    case endOfStream
    case failed(errno: Int32)
}

/// The byte stream under one connection, server or client: a plain socket (`SocketTransport`)
/// or TLS over one (`TLSTransport`).
///
/// A connection drives its transport only from its own serial queue, and only when its
/// `SocketChannel` says the descriptor is ready; a transport never blocks. The descriptor
/// belongs to the channel, which closes it once its sources are gone.
public protocol Transport: AnyObject {
    /// The descriptor the connection watches for readiness.
    var fileDescriptor: Int32 { get }
    /// True until the transport can carry requests (a TLS handshake in progress): the
    /// connection bounds this phase with its read timeout instead of the idle timeout.
    var isHandshaking: Bool { get }
    /// True when `read` would return something (plaintext already decrypted, or the end of
    /// the stream already seen) that no readiness event of the socket will announce.
    var hasBufferedInput: Bool { get }
    /// Reads decrypted/plain bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult
    /// Writes from `bytes`; may write fewer than offered. After `.wouldBlock` the caller
    /// retries with the same leading bytes (more may follow them), as `SSL_write` requires:
    /// a TLS transport may already have encrypted them.
    func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult
    /// Sends end-of-stream (FIN, or close_notify for TLS) while still allowing reads.
    func shutdownWrite()
}
