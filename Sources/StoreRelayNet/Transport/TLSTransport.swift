import StoreRelayCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// TLS over one socket, server or client side. The connection reads and writes plaintext; the
/// socket carries the ciphertext of a `TLSConnection`, a state machine over memory BIOs that
/// does no I/O itself, so nothing here blocks.
///
/// - The handshake runs inside `read`: each read event feeds the peer's next flight to the
///   engine and sends the answer. A client speaks first: `startHandshake()` sends its hello. `isHandshaking` lets the connection bound it with its read
///   timeout; a failed handshake is logged at debug, its alert sent, and reported `.failed`.
/// - Ciphertext the socket would not take waits in `ciphertext` and goes first on the next
///   read or write; while some waits, a read asks for `.writable` so it is not stranded.
/// - Like `SSL_write`, a write that answered `.wouldBlock` is retried with the same leading
///   bytes: they are already encrypted, and the retry reports them transferred once their
///   records are on the wire. So "transferred" always means "sent", and the connection's
///   write timeout still sees a peer that stopped reading.
/// - Plaintext decrypted beyond the caller's buffer, or an end of stream already seen, waits
///   here; `hasBufferedInput` tells the connection to read again without a socket event.
///
/// Not thread-safe: used only on its connection's queue, like the connection itself.
public final class TLSTransport: Transport {
    private enum State {
        case handshaking
        case established
        /// The handshake, the record layer or the socket failed; reads report `failure`.
        case failed
    }

    /// Plaintext encrypted per `write`, bounding the ciphertext held here (~4 records).
    static let maxPlaintextPerWrite = 64 * 1024

    public let fileDescriptor: Int32
    private let engine: TLSConnection
    private let logger: Logger
    private let peer: String
    private var state = State.handshaking
    private var failure: Int32 = EPROTO

    private var plaintext: [UInt8] = []
    private var plaintextOffset = 0
    /// close_notify or end of stream seen: `.endOfStream` once the plaintext is out.
    private var inputEnded = false

    private var ciphertext: [UInt8] = []
    private var ciphertextOffset = 0
    /// Plaintext bytes of the last `write` whose records are not all sent yet.
    private var encryptedUnsent = 0
    /// `shutdown(SHUT_WR)` waits until the close_notify record has left.
    private var shutdownAfterFlush = false

    /// Over a connected socket; `engine` decides the side (client or server).
    public init(fileDescriptor: Int32, engine: TLSConnection, logger: Logger, peer: String) {
        self.fileDescriptor = fileDescriptor
        self.engine = engine
        self.logger = logger
        self.peer = peer
    }

    public var isHandshaking: Bool { state == .handshaking }

    /// Why the transport failed (the handshake, the record layer or the socket), once it has.
    public private(set) var failureReason: String?
    /// OpenSSL's verdict when the failure was TLS's own (a certificate that did not verify, a
    /// bad record), nil when the socket failed.
    public private(set) var tlsFailure: TLSError?

    /// A client's first flight (ClientHello). The rest of the handshake runs in `read`, which
    /// reports `.wouldBlock` until it is done and then `isHandshaking` turns false.
    public func startHandshake() {
        advance()
    }

    public var hasBufferedInput: Bool { plaintextOffset < plaintext.count || inputEnded || state == .failed }

    public func read(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult {
        while true {
            if let result = bufferedResult(into: buffer) { return result }
            sendCiphertext()
            if state == .failed { continue }
            let count = SystemCalls.receive(fileDescriptor, into: buffer)
            if count > 0 {
                engine.receiveCiphertext(UnsafeRawBufferPointer(rebasing: buffer[..<count]))
                advance()
            } else if count == 0 {
                engine.receiveEndOfStream()
                if state == .handshaking { logger.debug("TLS handshake abandoned", [("http.peer", peer)]) }
                // Without close_notify this may be a truncation; HTTP framing tells the
                // connection whether a request was cut short.
                inputEnded = true
            } else {
                switch errno {
                case EAGAIN, EWOULDBLOCK: return .wouldBlock(hasPendingCiphertext ? .writable : .readable)
                case let error: return .failed(errno: error)
                }
            }
        }
    }

    public func write(_ bytes: UnsafeRawBufferPointer) -> TransportResult {
        switch state {
        case .handshaking: return .failed(errno: ENOTCONN)  // answers only follow requests
        case .failed: return .failed(errno: failure)
        case .established: break
        }
        sendCiphertext()
        if state == .failed { return .failed(errno: failure) }
        if hasPendingCiphertext { return .wouldBlock(.writable) }
        if encryptedUnsent > 0 {
            precondition(bytes.count >= encryptedUnsent, "a blocked TLS write must be retried with the same bytes")
            defer { encryptedUnsent = 0 }
            return .transferred(encryptedUnsent)
        }
        let count = min(bytes.count, Self.maxPlaintextPerWrite)
        do {
            try engine.writePlaintext(UnsafeRawBufferPointer(rebasing: bytes[..<count]))
        } catch {
            fail("TLS write failed", error)
            return .failed(errno: failure)
        }
        queueEngineOutput()
        if state == .failed { return .failed(errno: failure) }
        if hasPendingCiphertext {
            encryptedUnsent = count
            return .wouldBlock(.writable)
        }
        return .transferred(count)
    }

    /// Queues close_notify (RFC 8446 §6.1), then FIN once it is sent. Best effort: if the
    /// socket is full, it goes with the next read event, or not at all when the connection's
    /// linger deadline closes it first (the answers before it were complete).
    public func shutdownWrite() {
        guard state == .established else {
            SystemCalls.shutdownWrite(fileDescriptor)
            return
        }
        engine.close()
        shutdownAfterFlush = true
        queueEngineOutput()
    }

}

extension TLSTransport {
    /// Ciphertext waits for the socket: a writer waiting for writability has work to do.
    public var hasPendingCiphertext: Bool { ciphertextOffset < ciphertext.count }

    /// What `read` can answer without the socket: plaintext first, then the end or failure.
    private func bufferedResult(into buffer: UnsafeMutableRawBufferPointer) -> TransportResult? {
        if plaintextOffset < plaintext.count {
            let count = min(buffer.count, plaintext.count - plaintextOffset)
            plaintext.withUnsafeBytes { source in
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: source[plaintextOffset..<(plaintextOffset + count)]))
            }
            plaintextOffset += count
            if plaintextOffset == plaintext.count {
                plaintext.removeAll(keepingCapacity: plaintext.capacity <= 64 * 1024)
                plaintextOffset = 0
            }
            return .transferred(count)
        }
        if state == .failed { return .failed(errno: failure) }
        if inputEnded { return .endOfStream }
        return nil
    }

    /// Runs the engine over newly received ciphertext: the handshake, then decryption. Then
    /// sends whatever the engine produced (a handshake flight, session tickets, an alert).
    private func advance() {
        defer { queueEngineOutput() }
        if state == .handshaking {
            do {
                guard try engine.handshake() else { return }
                state = .established
                logger.debug("TLS established", [("http.peer", peer), ("tls.version", engine.protocolVersion ?? "")])
            } catch {
                // The alert telling the client why is in the engine's output: still sent.
                fail("TLS handshake failed", error)
                return
            }
        }
        guard state == .established else { return }
        do {
            // Right after the handshake too: the first request often rides with the
            // client's last handshake message, and no socket event would announce it.
            if try engine.readPlaintext(into: &plaintext) == .closed { inputEnded = true }
        } catch {
            fail("TLS read failed", error)
        }
    }

    private func queueEngineOutput() {
        if engine.hasPendingCiphertext { ciphertext += engine.takeCiphertext() }
        sendCiphertext()
    }

    /// Sends queued ciphertext until it is all out or the socket is full.
    private func sendCiphertext() {
        while hasPendingCiphertext {
            let count = ciphertext.withUnsafeBytes { bytes in
                SystemCalls.send(fileDescriptor, UnsafeRawBufferPointer(rebasing: bytes[ciphertextOffset...]))
            }
            if count >= 0 {
                ciphertextOffset += count
                continue
            }
            switch errno {
            case EAGAIN, EWOULDBLOCK: return
            case let error:
                ciphertext = []
                ciphertextOffset = 0
                if state != .failed { fail("TLS send failed", String(cString: strerror(error)), errno: error) }
                return
            }
        }
        ciphertext.removeAll(keepingCapacity: ciphertext.capacity <= 64 * 1024)
        ciphertextOffset = 0
        if shutdownAfterFlush {
            shutdownAfterFlush = false
            SystemCalls.shutdownWrite(fileDescriptor)
        }
    }

    private func fail(_ message: String, _ error: TLSError) {
        tlsFailure = error
        fail(message, error.description)
    }

    private func fail(_ message: String, _ reason: String, errno: Int32 = EPROTO) {
        state = .failed
        failure = errno
        failureReason = "\(message): \(reason)"
        logger.debug(message, [("http.peer", peer), ("tls.error", reason)])
    }
}
