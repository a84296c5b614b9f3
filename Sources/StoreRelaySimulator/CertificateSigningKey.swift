internal import COpenSSL
import StoreRelayCrypto

/// A CA's P-256 private key as OpenSSL's certificate API needs it: the one Swift owner of an
/// `EVP_PKEY*` inside this module, freed in `deinit`.
///
/// `P256PrivateKey` (StoreRelayCrypto) keeps its `EVP_PKEY*` to itself, so the key crosses
/// over as PKCS#8 PEM: generated there (one place owns key generation), parsed here.
final class CertificateSigningKey {
    let pointer: OpaquePointer
    /// The same key, for callers that sign JWS with it.
    let key: P256PrivateKey

    init(_ key: P256PrivateKey) throws(SimulatorError) {
        let pem: String
        do {
            pem = try key.pemString()
        } catch {
            throw SimulatorError(.signing, "cannot export a generated key: \(error.reason)")
        }
        let parsed: OpaquePointer? = Array(pem.utf8).withUnsafeBytes { raw in
            // BIO_new_mem_buf does not copy: the BIO must not outlive this closure.
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PrivateKey(bio, nil, nil, nil)
        }
        guard let parsed else { throw OpenSSLErrors.failure("cannot load a generated key") }
        pointer = parsed
        self.key = key
    }

    /// A fresh P-256 key.
    static func generate() throws(SimulatorError) -> CertificateSigningKey {
        do {
            return try CertificateSigningKey(P256PrivateKey.generate())
        } catch let error as SimulatorError {
            throw error
        } catch {
            throw SimulatorError(.signing, "P-256 key generation failed: \(error)")
        }
    }

    deinit { EVP_PKEY_free(pointer) }
}
