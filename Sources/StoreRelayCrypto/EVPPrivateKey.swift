internal import COpenSSL

/// What `P256PrivateKey` and `RSAPrivateKey` share around an owned `EVP_PKEY*`: reading and
/// writing unencrypted PEM, and one `EVP_DigestSign` with SHA-256 (its output is DER for
/// ECDSA, the raw signature for RSA; each type turns it into its JWS form).
enum EVPPrivateKey {
    /// An unencrypted PEM private key (PKCS#8, or the algorithm's traditional form), owned by
    /// the caller.
    static func read(pem: String) throws(CryptoError) -> OpaquePointer {
        let key: OpaquePointer? = Array(pem.utf8).withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { throw CryptoError.fromQueue(.invalidKey, "not an unencrypted PEM private key") }
        return key
    }

    /// `key` as unencrypted PKCS#8 PEM.
    static func pem(_ key: OpaquePointer) throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.fromQueue(.internalFailure, "BIO_new failed") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, key, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.fromQueue(.internalFailure, "cannot write the private key as PEM")
        }
        return MemoryBIO.readAll(bio)
    }

    /// Signs `message` with SHA-256 and `key`, each call with its own context.
    static func signSHA256(_ key: OpaquePointer, _ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.fromQueue(.internalFailure, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, key, nil) == 1 else {
            throw CryptoError.fromQueue(.internalFailure, "EVP_DigestSignInit_ex failed")
        }
        var length = 0
        let sized = message.withUnsafeBufferPointer { data in
            EVP_DigestSign(context, nil, &length, data.baseAddress, data.count)
        }
        guard sized == 1 else { throw CryptoError.fromQueue(.internalFailure, "EVP_DigestSign failed") }
        var signature = [UInt8](repeating: 0, count: length)
        let signed = signature.withUnsafeMutableBufferPointer { out in
            message.withUnsafeBufferPointer { data in
                EVP_DigestSign(context, out.baseAddress, &length, data.baseAddress, data.count)
            }
        }
        guard signed == 1 else { throw CryptoError.fromQueue(.internalFailure, "EVP_DigestSign failed") }
        // The first call gives the maximum size; a DER signature is often a little shorter.
        return Array(signature[0..<length])
    }
}
