internal import COpenSSL

/// A public key: the one Swift owner of an OpenSSL `EVP_PKEY*`, freed in `deinit`.
///
/// `@unchecked Sendable`: never mutated after init; OpenSSL 3 allows one `EVP_PKEY` to be
/// used by several threads at once for verification, each with its own `EVP_MD_CTX`.
public final class PublicKey: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Takes ownership of one reference to `pointer`.
    init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

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

    /// Whether this is an EC key on P-256 (prime256v1), the only curve ES256 allows.
    public var isP256: Bool { PublicKey.isP256(pointer) }

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
        guard isP256, let der = ECDSASignature.der(fromRaw: rawSignature) else { return false }
        guard let context = EVP_MD_CTX_new() else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit(context, nil, EVP_sha256(), nil, pointer) == 1 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        let result = der.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { data in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, data.baseAddress, data.count)
            }
        }
        // Three-valued: 1 valid, 0 invalid, negative for a malformed signature (sometimes with
        // an empty queue). Only 1 is a valid signature; everything else leaves queue entries
        // we must not leak to the next call on this thread.
        if result != 1 { OpenSSLErrorQueue.clear() }
        return result == 1
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
