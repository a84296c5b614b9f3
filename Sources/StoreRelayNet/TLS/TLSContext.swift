internal import COpenSSL
internal import CStoreRelayShims

/// The single Swift owner of one `SSL_CTX`, configured for a client or a server.
///
/// An `SSL_CTX` may be shared by many threads creating `SSL` objects once it is no longer
/// modified. The invariant behind `@unchecked Sendable`: every setting is applied in the
/// initializer and the context is never changed afterwards.
public final class TLSContext: @unchecked Sendable {
    /// Which side of the handshake connections from this context play.
    public enum Role: Sendable { case client, server }

    public let role: Role
    private let pointer: OpaquePointer

    /// A client context that verifies servers against the system CA store (which honours
    /// `SSL_CERT_FILE` / `SSL_CERT_DIR`, as OpenSSL does) plus `extraCAFile` when given, and
    /// presents the PEM chain in `certificateChainFile` with `privateKeyFile` to a server that
    /// asks for a client certificate (mutual TLS), when given. TLS 1.2 is the minimum.
    public convenience init(clientTrustingExtraCAFile extraCAFile: String? = nil, certificateChainFile: String? = nil,
                            privateKeyFile: String? = nil) throws(TLSError) {
        try self.init(role: .client)
        ERR_clear_error()
        // A machine without a CA bundle still works with an explicit ca-file, so a missing
        // default store is not fatal here; a failed verification later says why.
        _ = SSL_CTX_set_default_verify_paths(pointer)
        ERR_clear_error()
        if let extraCAFile {
            guard SSL_CTX_load_verify_file(pointer, extraCAFile) == 1 else {
                throw TLSError.fromErrorQueue(.configuration, "cannot load CA file \(extraCAFile)")
            }
        }
        SSL_CTX_set_verify(pointer, SSL_VERIFY_PEER, nil)
        if let certificateChainFile, let privateKeyFile {
            try useCertificate(chainFile: certificateChainFile, privateKeyFile: privateKeyFile)
        }
    }

    /// A server context presenting the PEM chain in `certificateChainFile` (leaf first) with
    /// the PEM private key in `privateKeyFile`. Fails when the key does not match the leaf.
    public convenience init(serverCertificateChainFile: String, privateKeyFile: String) throws(TLSError) {
        try self.init(role: .server)
        try useCertificate(chainFile: serverCertificateChainFile, privateKeyFile: privateKeyFile)
        // Forward-secret AEAD suites only for TLS 1.2; TLS 1.3 suites are all sound by default.
        let ciphers = "ECDHE+AESGCM:ECDHE+CHACHA20:!aNULL:!eNULL:!MD5:!DSS:!RC4:!3DES"
        guard SSL_CTX_set_cipher_list(pointer, ciphers) == 1 else {
            throw TLSError.fromErrorQueue(.configuration, "cannot set cipher list")
        }
    }

    private init(role: Role) throws(TLSError) {
        ERR_clear_error()
        guard let context = SSL_CTX_new(role == .client ? TLS_client_method() : TLS_server_method()) else {
            throw TLSError.fromErrorQueue(.configuration, "SSL_CTX_new failed")
        }
        pointer = context
        self.role = role
        guard storerelay_SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION) == 1 else {
            throw TLSError.fromErrorQueue(.configuration, "cannot require TLS 1.2")
        }
        storerelay_SSL_CTX_set_hardening_options(context)
    }

    /// Loads the certificate chain and key this side presents; fails when they do not match.
    private func useCertificate(chainFile: String, privateKeyFile: String) throws(TLSError) {
        ERR_clear_error()
        guard SSL_CTX_use_certificate_chain_file(pointer, chainFile) == 1 else {
            throw TLSError.fromErrorQueue(.configuration, "cannot load certificate chain \(chainFile)")
        }
        guard SSL_CTX_use_PrivateKey_file(pointer, privateKeyFile, SSL_FILETYPE_PEM) == 1 else {
            throw TLSError.fromErrorQueue(.configuration, "cannot load private key \(privateKeyFile)")
        }
        guard SSL_CTX_check_private_key(pointer) == 1 else {
            throw TLSError.fromErrorQueue(.configuration, "private key \(privateKeyFile) does not match the certificate")
        }
    }

    deinit { SSL_CTX_free(pointer) }

    /// Runs `body` with the borrowed `SSL_CTX*`; it must not escape.
    func withUnsafeContext<Result>(_ body: (OpaquePointer) throws(TLSError) -> Result) throws(TLSError) -> Result {
        try body(pointer)
    }
}
