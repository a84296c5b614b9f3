import CFuzzOpenSSL
import StoreRelayCrypto

/// Three P-256 keys made once per process: each as StoreRelay's types and as an `EVP_PKEY`
/// that OpenSSL parsed from the public key's PEM (the reference shares no object with ours).
final class SigningKeys: @unchecked Sendable {
    struct Entry {
        let index: Int
        let privateKey: P256PrivateKey
        let publicKey: PublicKey
        /// OpenSSL's own copy of the public key; read-only after init.
        let reference: OpaquePointer

        /// OpenSSL's verdict: `EVP_DigestVerify` (SHA-256) with a fresh context on the DER
        /// of raw `R‖S`; anything but 64 bytes is no ES256 signature at all.
        func referenceVerdict(_ raw: [UInt8], _ message: [UInt8]) -> Bool {
            guard raw.count == 64, let context = EVP_MD_CTX_new() else { return false }
            defer { EVP_MD_CTX_free(context); ERR_clear_error() }
            guard EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, reference, nil) == 1 else { return false }
            let der = DER.signature(raw)
            return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
        }
    }

    static let shared = SigningKeys()
    let entries: [Entry]

    private init() {
        entries = (0..<3).map { index in
            guard let privateKey = try? P256PrivateKey.generate(), let publicKey = try? privateKey.publicKey(),
                  let pem = try? publicKey.pemString()
            else { fatalError("cannot make a P-256 key") }
            let bytes = Array(pem.utf8)
            let reference: OpaquePointer? = bytes.withUnsafeBytes { raw in
                guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
                defer { BIO_free(bio) }
                return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
            }
            guard let reference else { fatalError("OpenSSL cannot read the public key") }
            return Entry(index: index, privateKey: privateKey, publicKey: publicKey, reference: reference)
        }
    }
}

/// DER for an ECDSA-Sig-Value, written here rather than through the library under test:
/// minimal INTEGERs, a leading zero where the top bit is set.
enum DER {
    static func signature(_ raw: [UInt8]) -> [UInt8] {
        func integer(_ bytes: ArraySlice<UInt8>) -> [UInt8] {
            var value = Array(bytes.drop(while: { $0 == 0 }))
            if value.first.map({ $0 & 0x80 != 0 }) ?? true { value.insert(0, at: 0) }
            return [0x02, UInt8(value.count)] + value
        }
        let body = integer(raw[0..<32]) + integer(raw[32..<64])
        return [0x30, UInt8(body.count)] + body
    }
}
