internal import COpenSSL
internal import CStoreRelayShims

/// A TLS session as a pure state machine over bytes: the caller's event loop feeds it the
/// ciphertext read from the socket and sends whatever ciphertext it produces. It does no I/O.
///
/// The `SSL` reads from and writes to two memory BIOs, so no call here ever blocks and
/// "want write" cannot happen: output just accumulates until `takeCiphertext()`.
/// One owner of one `SSL*` (which owns both BIOs). Not thread-safe: confine it to the
/// connection's serial queue.
public final class TLSConnection {
    /// What `readPlaintext` saw after draining everything decryptable.
    public enum ReadStatus: Sendable, Equatable {
        /// More ciphertext is needed for further plaintext.
        case needsInput
        /// The peer sent close_notify: no more plaintext will come.
        case closed
    }

    private let ssl: OpaquePointer
    /// Ciphertext from the network, read by OpenSSL (borrowed: the `SSL` owns it).
    private let networkIn: OpaquePointer
    /// Ciphertext produced by OpenSSL, for the network (borrowed: the `SSL` owns it).
    private let networkOut: OpaquePointer
    public let role: TLSContext.Role
    public private(set) var isHandshakeComplete = false

    /// A client engine for `serverName`: sets SNI (not for IP literals, as RFC 6066 requires)
    /// and checks the certificate names that host or IP address.
    public convenience init(clientContext: TLSContext, serverName: String) throws(TLSError) {
        precondition(clientContext.role == .client, "a client engine needs a client context")
        try self.init(context: clientContext)
        ERR_clear_error()
        let isIPAddress = serverName.contains(":") || serverName.allSatisfy { $0.isNumber || $0 == "." }
        if isIPAddress {
            guard X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName) == 1 else {
                throw TLSError.fromErrorQueue(.configuration, "invalid IP address \(serverName)")
            }
        } else {
            guard storerelay_SSL_set_tlsext_host_name(ssl, serverName) == 1,
                  SSL_set1_host(ssl, serverName) == 1
            else { throw TLSError.fromErrorQueue(.configuration, "invalid host name \(serverName)") }
        }
        SSL_set_connect_state(ssl)
    }

    /// A server engine; see `TLSServerContext.makeConnection()`.
    public convenience init(serverContext: TLSContext) throws(TLSError) {
        precondition(serverContext.role == .server, "a server engine needs a server context")
        try self.init(context: serverContext)
        SSL_set_accept_state(ssl)
    }

    private init(context: TLSContext) throws(TLSError) {
        ERR_clear_error()
        role = context.role
        guard let ssl = try context.withUnsafeContext({ (ctx) throws(TLSError) in SSL_new(ctx) }) else {
            throw TLSError.fromErrorQueue(.configuration, "SSL_new failed")
        }
        guard let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_free(ssl)
            throw TLSError.fromErrorQueue(.configuration, "BIO_new failed")
        }
        SSL_set_bio(ssl, input, output)
        self.ssl = ssl
        networkIn = input
        networkOut = output
    }

    deinit { SSL_free(ssl) }

    // MARK: Ciphertext side

    /// Hands ciphertext read from the socket to the engine.
    public func receiveCiphertext(_ bytes: some Collection<UInt8>) {
        var remaining = Array(bytes)[...]
        while !remaining.isEmpty {
            let written = remaining.withUnsafeBytes { BIO_write(networkIn, $0.baseAddress, Int32($0.count)) }
            guard written > 0 else { break }  // a memory BIO only fails when out of memory
            remaining = remaining.dropFirst(Int(written))
        }
    }

    /// Tells the engine the transport reached end of stream: a later read that needs more
    /// input fails as a truncation instead of waiting forever.
    public func receiveEndOfStream() {
        storerelay_BIO_set_mem_eof(networkIn)
    }

    /// True when ciphertext is waiting to be sent.
    public var hasPendingCiphertext: Bool { BIO_ctrl_pending(networkOut) > 0 }

    /// Takes all ciphertext the engine has produced; send it in order.
    public func takeCiphertext() -> [UInt8] {
        let pending = Int(BIO_ctrl_pending(networkOut))
        guard pending > 0 else { return [] }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = bytes.withUnsafeMutableBytes { BIO_read(networkOut, $0.baseAddress, Int32(pending)) }
        return read > 0 ? Array(bytes.prefix(Int(read))) : []
    }

    // MARK: Handshake and plaintext side

    /// Advances the handshake with the ciphertext received so far. Returns true once it is
    /// complete; false when it needs more input (send `takeCiphertext()` first).
    /// After a failure, still send `takeCiphertext()`: it holds the alert telling the peer why.
    /// After success, call `readPlaintext` before waiting on the socket: the peer's first
    /// data often arrives together with its last handshake message.
    public func handshake() throws(TLSError) -> Bool {
        if isHandshakeComplete { return true }
        ERR_clear_error()
        let result = SSL_do_handshake(ssl)
        if result == 1 {
            isHandshakeComplete = true
            return true
        }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return false
        case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
            ERR_clear_error()
            throw TLSError(.io, "connection closed during the TLS handshake")
        default:
            let verification = SSL_get_verify_result(ssl)
            if role == .client, verification != Int(X509_V_OK) {
                let reason = String(cString: X509_verify_cert_error_string(verification))
                throw TLSError.fromErrorQueue(.certificate, "certificate verification failed (\(reason))")
            }
            throw TLSError.fromErrorQueue(.handshake, "TLS handshake failed")
        }
    }

    /// Decrypts everything available, appending the plaintext to `plaintext`.
    public func readPlaintext(into plaintext: inout [UInt8]) throws(TLSError) -> ReadStatus {
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            ERR_clear_error()
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 {
                plaintext.append(contentsOf: buffer.prefix(Int(count)))
                continue
            }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                return .needsInput
            case SSL_ERROR_ZERO_RETURN:
                return .closed
            case SSL_ERROR_SYSCALL where ERR_peek_error() == 0:
                throw TLSError(.io, "connection closed without TLS close_notify")
            case SSL_ERROR_SSL where ERR_GET_REASON(ERR_peek_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING:
                throw TLSError.fromErrorQueue(.io, "connection closed without TLS close_notify")
            default:
                throw TLSError.fromErrorQueue(.protocol, "TLS read failed")
            }
        }
    }

    /// Encrypts `plaintext`; the ciphertext is then ready in `takeCiphertext()`.
    public func writePlaintext(_ plaintext: some Collection<UInt8>) throws(TLSError) {
        precondition(isHandshakeComplete, "write only after the handshake")
        var remaining = Array(plaintext)[...]
        while !remaining.isEmpty {
            ERR_clear_error()
            let count = remaining.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
            guard count > 0 else { throw TLSError.fromErrorQueue(.protocol, "TLS write failed") }
            remaining = remaining.dropFirst(Int(count))
        }
    }

    /// Queues a close_notify alert (RFC 8446 §6.1); send `takeCiphertext()` before closing.
    public func close() {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
        ERR_clear_error()
    }

    // MARK: Session facts

    /// The host name the client asked for with SNI (server side), if any.
    public var requestedServerName: String? {
        guard let name = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name) else { return nil }
        return String(cString: name)
    }

    /// The negotiated protocol, such as "TLSv1.3", once the handshake is complete.
    public var protocolVersion: String? {
        guard isHandshakeComplete, let name = SSL_get_version(ssl) else { return nil }
        return String(cString: name)
    }
}
