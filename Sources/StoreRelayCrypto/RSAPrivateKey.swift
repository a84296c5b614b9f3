internal import COpenSSL

/// An RSA private key for RS256 signing: a Google service account's key (the OAuth2
/// JWT-bearer assertion) and `storerelay simulate --store play`'s dev key for push tokens.
///
/// `@unchecked Sendable`: never mutated after init; each signature uses its own `EVP_MD_CTX`.
public final class RSAPrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// A fresh key from OpenSSL's CSPRNG (2048 bits unless asked otherwise).
    public static func generate(bits: Int = 2048) throws(CryptoError) -> RSAPrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw CryptoError.fromQueue(.internalFailure, "cannot create an RSA key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_rsa_keygen_bits(context, Int32(bits)) == 1,
              EVP_PKEY_generate(context, &key) == 1,
              let key
        else { throw CryptoError.fromQueue(.internalFailure, "RSA key generation failed") }
        return RSAPrivateKey(taking: key)
    }

    /// Loads an unencrypted PEM private key (PKCS#8 `PRIVATE KEY`, as in a service account's
    /// JSON, or PKCS#1 `RSA PRIVATE KEY`). A key that is not RSA, or under 2048 bits, is refused.
    public convenience init(pemString: String) throws(CryptoError) {
        let key: OpaquePointer? = Array(pemString.utf8).withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let key else { throw CryptoError.fromQueue(.invalidKey, "not an unencrypted PEM private key") }
        guard EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA else {
            EVP_PKEY_free(key)
            throw CryptoError(.unsupportedKey, "the private key is not an RSA key")
        }
        guard EVP_PKEY_get_bits(key) >= Int32(RSAPublicKey.minimumBits) else {
            EVP_PKEY_free(key)
            throw CryptoError(.unsupportedKey, "the RSA key is shorter than \(RSAPublicKey.minimumBits) bits")
        }
        self.init(taking: key)
    }

    /// The key as unencrypted PKCS#8 PEM. Write it to disk with mode 0600.
    public func pemString() throws(CryptoError) -> String {
        guard let bio = BIO_new(BIO_s_mem()) else { throw CryptoError.fromQueue(.internalFailure, "BIO_new failed") }
        defer { BIO_free(bio) }
        guard PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil) == 1 else {
            throw CryptoError.fromQueue(.internalFailure, "cannot write the private key as PEM")
        }
        return MemoryBIO.readAll(bio)
    }

    /// The matching public key, built from the modulus and exponent as a verifier would.
    public func publicKey() throws(CryptoError) -> RSAPublicKey {
        try RSAPublicKey(modulus: RSAPublicKey.bigNumber(OSSL_PKEY_PARAM_RSA_N, of: pointer),
                         exponent: RSAPublicKey.bigNumber(OSSL_PKEY_PARAM_RSA_E, of: pointer))
    }

    /// Signs `message` with RS256 (RSASSA-PKCS1-v1_5, SHA-256); the signature is the modulus's length.
    public func signRS256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        guard let context = EVP_MD_CTX_new() else { throw CryptoError.fromQueue(.internalFailure, "EVP_MD_CTX_new failed") }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit_ex(context, nil, "SHA256", nil, nil, pointer, nil) == 1 else {
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
        return Array(signature[0..<length])
    }
}
