internal import COpenSSL
import StoreRelayCore

/// A public key: the one Swift owner of an OpenSSL `EVP_PKEY*`, freed in `deinit`.
///
/// `@unchecked Sendable`: never mutated after init; OpenSSL 3 allows one `EVP_PKEY` to be
/// used by several threads at once for verification, each with its own context. Contexts
/// ready to verify are kept in a small locked pool: a thread takes one for a check and gives
/// it back, so no context is ever used by two threads at once.
///
/// Signatures are checked by `EVP_PKEY_verify` on the message's SHA-256 digest: OpenSSL's own
/// ECDSA, with no arithmetic of ours. Taking the digest rather than the message lets the JWS
/// decoder hash as it decodes, continuing from a cached header's state.
public final class PublicKey: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Whether this is an EC key on P-256 (prime256v1), the only curve ES256 allows. Decided
    /// once: every signature check asks, and asking OpenSSL means a name lookup and a string.
    public let isP256: Bool

    /// Takes ownership of one reference to `pointer` (`package`: a certificate in
    /// StoreRelayVerification hands over the key it reads).
    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
        isP256 = PublicKey.isP256(pointer)
    }

    /// `EVP_PKEY_CTX`s already through `EVP_PKEY_verify_init`: setting one up fetches the
    /// algorithm from OpenSSL's provider store, a few microseconds per signature that a key
    /// checking three signatures per notification, thousands of times a second, need not pay.
    private let verifyContexts = Locked<[OpaquePointer]>([])
    private static let pooledContexts = 8

    deinit {
        for context in verifyContexts.current { EVP_PKEY_CTX_free(context) }
        EVP_PKEY_free(pointer)
    }

    /// Parses a PEM `PUBLIC KEY` (SubjectPublicKeyInfo).
    public convenience init(pemString: String) throws(CryptoError) {
        let key: OpaquePointer? = Array(pemString.utf8).withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        }
        guard let key else { throw CryptoError.fromQueue(.invalidKey, "not a PEM public key") }
        self.init(taking: key)
    }

    static func isP256(_ key: OpaquePointer) -> Bool {
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_EC else { return false }
        var name = [CChar](repeating: 0, count: 64)
        var length = 0
        guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        let group = name.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
        return group == "prime256v1" || group == "P-256"
    }

    /// Verifies a JWS ES256 signature (RFC 7518 §3.4): the raw 64-byte `R‖S` over `message`
    /// with SHA-256. Any malformed input, wrong key type or wrong signature is `false`.
    public func isValidES256Signature(_ rawSignature: [UInt8], for message: [UInt8]) -> Bool {
        isValidES256Signature(rawSignature, digest: SHA256.hash(message))
    }

    /// The same check given the message's SHA-256 `digest` (32 bytes), for callers that hash
    /// as they go.
    public func isValidES256Signature(_ rawSignature: [UInt8], digest: [UInt8]) -> Bool {
        guard isP256, ECDSASignature.isWellFormedRaw(rawSignature), digest.count == 32 else { return false }
        return isValidES256SignatureByEVP(rawSignature, digest: digest)
    }

    private func isValidES256SignatureByEVP(_ rawSignature: [UInt8], digest: [UInt8]) -> Bool {
        guard let der = ECDSASignature.der(fromRaw: rawSignature) else { return false }
        guard let context = takeVerifyContext() else {
            OpenSSLErrorQueue.clear()
            return false
        }
        let result = der.withUnsafeBufferPointer { signature in
            digest.withUnsafeBufferPointer { digest in
                EVP_PKEY_verify(context, signature.baseAddress, signature.count, digest.baseAddress, digest.count)
            }
        }
        // Three-valued: 1 valid, 0 invalid, negative for a malformed signature (sometimes with
        // an empty queue). Only 1 is a valid signature; everything else leaves queue entries
        // we must not leak to the next call on this thread. A context that saw an error is
        // not trusted again.
        if result != 1 { OpenSSLErrorQueue.clear() }
        giveBack(context, reusable: result == 1 || result == 0)
        return result == 1
    }

    private func takeVerifyContext() -> OpaquePointer? {
        if let pooled = verifyContexts.withLock({ $0.popLast() }) { return pooled }
        guard let context = EVP_PKEY_CTX_new_from_pkey(nil, pointer, nil) else { return nil }
        guard EVP_PKEY_verify_init(context) == 1 else {
            EVP_PKEY_CTX_free(context)
            return nil
        }
        return context
    }

    private func giveBack(_ context: OpaquePointer, reusable: Bool) {
        let kept = reusable && verifyContexts.withLock { pool in
            guard pool.count < PublicKey.pooledContexts else { return false }
            pool.append(context)
            return true
        }
        if !kept { EVP_PKEY_CTX_free(context) }
    }

    /// The SubjectPublicKeyInfo as PEM.
    public func pemString() throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.fromQueue(.internalFailure, "BIO_new failed") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PUBKEY(bio, pointer) == 1 else {
            throw CryptoError.fromQueue(.internalFailure, "cannot write the public key as PEM")
        }
        return MemoryBIO.readAll(bio)
    }
}

/// Reading what was written into a memory BIO (`BIO_get_mem_data` is a macro).
enum MemoryBIO {
    static func readAll(_ bio: OpaquePointer) -> String {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = BIO_read(bio, &chunk, Int32(chunk.count))
            if n <= 0 { break }
            out.append(contentsOf: chunk[0..<Int(n)])
        }
        OpenSSLErrorQueue.clear()
        return String(decoding: out, as: UTF8.self)
    }
}
