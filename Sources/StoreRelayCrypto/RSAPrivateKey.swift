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
        let key = try EVPPrivateKey.read(pem: pemString)
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
    public func pemString() throws(CryptoError) -> String { try EVPPrivateKey.pem(pointer) }

    /// The matching public key, built from the modulus and exponent as a verifier would.
    public func publicKey() throws(CryptoError) -> RSAPublicKey {
        try RSAPublicKey(modulus: RSAPublicKey.bigNumber(OSSL_PKEY_PARAM_RSA_N, of: pointer),
                         exponent: RSAPublicKey.bigNumber(OSSL_PKEY_PARAM_RSA_E, of: pointer))
    }

    /// Signs `message` with RS256 (RSASSA-PKCS1-v1_5, SHA-256); the signature is the modulus's length.
    public func signRS256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        try EVPPrivateKey.signSHA256(pointer, message)
    }
}
