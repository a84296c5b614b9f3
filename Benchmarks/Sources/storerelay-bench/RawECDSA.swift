import BenchKit
import CBenchOpenSSL

/// ES256 verification straight through OpenSSL, the way `openssl speed` does it (digest
/// computed once, one `EVP_PKEY_CTX` reused), to split the cost of the project's
/// `PublicKey.isValidES256Signature` into the curve arithmetic, the SHA-256 of the input and
/// the per-call set-up (`EVP_MD_CTX_new` + `EVP_DigestVerifyInit`).
final class RawECDSA {
    private let key: OpaquePointer
    private let context: OpaquePointer
    private let der: [UInt8]
    private let digest: [UInt8]
    private let message: [UInt8]

    init(leafPEM: String, rawSignature: [UInt8], message: [UInt8]) throws {
        let certificate: OpaquePointer? = Array(leafPEM.utf8).withUnsafeBytes { raw in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_X509(bio, nil, nil, nil)
        }
        guard let certificate, let key = X509_get_pubkey(certificate) else { throw BenchError("cannot read the leaf key") }
        X509_free(certificate)
        self.key = key
        guard let context = EVP_PKEY_CTX_new(key, nil), EVP_PKEY_verify_init(context) == 1 else {
            throw BenchError("EVP_PKEY_verify_init failed")
        }
        self.context = context
        let signature = ECDSA_SIG_new()
        let r = BN_bin2bn(rawSignature, 32, nil)
        let s = rawSignature.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress! + 32, 32, nil) }
        ECDSA_SIG_set0(signature, r, s)
        var out: UnsafeMutablePointer<UInt8>?
        let length = i2d_ECDSA_SIG(signature, &out)
        der = Array(UnsafeBufferPointer(start: out, count: Int(length)))
        CRYPTO_free(out, #fileID, #line)
        ECDSA_SIG_free(signature)
        var hash = [UInt8](repeating: 0, count: 32)
        var hashLength: UInt32 = 0
        EVP_Digest(message, message.count, &hash, &hashLength, EVP_sha256(), nil)
        digest = hash
        self.message = message
    }

    deinit {
        EVP_PKEY_CTX_free(context)
        EVP_PKEY_free(key)
    }

    /// Verifies the precomputed digest with the reused context (what openssl speed times).
    func verifyDigest() -> Bool {
        EVP_PKEY_verify(context, der, der.count, digest, digest.count) == 1
    }

    /// Hashes and verifies with a fresh `EVP_MD_CTX` and `EVP_DigestVerifyInit` each call, as
    /// `PublicKey.isValidES256Signature` does (without its raw-to-DER conversion).
    func digestVerifyFresh() -> Bool {
        guard let md = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(md) }
        guard EVP_DigestVerifyInit(md, nil, EVP_sha256(), nil, key) == 1 else { return false }
        return EVP_DigestVerify(md, der, der.count, message, message.count) == 1
    }
}

/// Used from one thread at a time by `VerifyBenchmark.measure(threads: 1, ...)`.
extension RawECDSA: @unchecked Sendable {}
