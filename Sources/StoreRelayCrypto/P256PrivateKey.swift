internal import COpenSSL

/// An EC P-256 private key for ES256 signing (`storerelay simulate` signs with a local dev CA):
/// the one Swift owner of an `EVP_PKEY*`.
///
/// `@unchecked Sendable`: never mutated after init; each signature uses its own `EVP_MD_CTX`.
public final class P256PrivateKey: @unchecked Sendable {
    let pointer: OpaquePointer

    private init(taking pointer: OpaquePointer) { self.pointer = pointer }

    deinit { EVP_PKEY_free(pointer) }

    /// A fresh key from OpenSSL's CSPRNG.
    public static func generate() throws(CryptoError) -> P256PrivateKey {
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else {
            throw CryptoError.fromQueue(.internalFailure, "cannot create an EC key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_keygen_init(context) == 1,
              EVP_PKEY_CTX_set_group_name(context, "P-256") == 1,
              EVP_PKEY_generate(context, &key) == 1,
              let key
        else { throw CryptoError.fromQueue(.internalFailure, "P-256 key generation failed") }
        return P256PrivateKey(taking: key)
    }

    /// Loads an unencrypted PEM private key (PKCS#8 `PRIVATE KEY` or SEC1 `EC PRIVATE KEY`).
    public convenience init(pemString: String) throws(CryptoError) {
        let key = try EVPPrivateKey.read(pem: pemString)
        guard PublicKey.isP256(key) else {
            EVP_PKEY_free(key)
            throw CryptoError(.unsupportedKey, "the private key is not an EC P-256 key")
        }
        self.init(taking: key)
    }

    /// The key as unencrypted PKCS#8 PEM. Write it to disk with mode 0600.
    public func pemString() throws(CryptoError) -> String { try EVPPrivateKey.pem(pointer) }

    /// The matching public key (a separate, public-only `EVP_PKEY`).
    public func publicKey() throws(CryptoError) -> PublicKey {
        let length = i2d_PUBKEY(pointer, nil)
        guard length > 0 else { throw CryptoError.fromQueue(.internalFailure, "cannot encode the public key") }
        var der = [UInt8](repeating: 0, count: Int(length))
        _ = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_PUBKEY(pointer, &cursor)
        }
        let key: OpaquePointer? = der.withUnsafeBufferPointer { buffer in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        }
        guard let key else { throw CryptoError.fromQueue(.internalFailure, "cannot decode the public key") }
        return PublicKey(taking: key)
    }

    /// Signs `message` with ES256 and returns the JWS form: raw `R‖S`, 64 bytes.
    public func signES256(_ message: [UInt8]) throws(CryptoError) -> [UInt8] {
        let der = try EVPPrivateKey.signSHA256(pointer, message)
        guard let raw = ECDSASignature.raw(fromDER: der) else {
            throw CryptoError(.internalFailure, "OpenSSL produced a signature that is not ECDSA P-256")
        }
        return raw
    }
}
