internal import COpenSSL
internal import CStoreRelayShims
import StoreRelayCore

/// Precomputed multiples of one P-256 public key, which halve the cost of verifying its
/// signatures (`p256_key_table.c` explains the arithmetic): worth ~25 ms and ~150 KB for a key
/// that checks thousands of signatures, as the leaf of Apple's chain does.
///
/// `@unchecked Sendable`: the table is read-only after init and OpenSSL only reads it while
/// verifying; each check borrows its own `BN_CTX` scratch from a small locked pool.
final class P256KeyTable: @unchecked Sendable {
    private let table: OpaquePointer
    private let scratchPool = Locked<[OpaquePointer]>([])
    private static let pooledScratch = 8

    /// `nil` when OpenSSL cannot build a table for `key` (a P-256 `EVP_PKEY`).
    init?(key: OpaquePointer) {
        guard let table = storerelay_p256_key_table_new(key) else { return nil }
        self.table = table
    }

    deinit {
        for scratch in scratchPool.current { BN_CTX_free(scratch) }
        storerelay_p256_key_table_free(table)
    }

    /// Whether the raw `R‖S` (64 bytes) signs the 32-byte SHA-256 `digest`; `nil` when OpenSSL
    /// failed (out of memory) and the caller should ask the general path instead.
    func isValidSignature(_ rawSignature: [UInt8], digest: [UInt8]) -> Bool? {
        precondition(rawSignature.count == 64 && digest.count == 32)
        guard let scratch = scratchPool.withLock({ $0.popLast() }) ?? BN_CTX_new() else { return nil }
        let result = rawSignature.withUnsafeBufferPointer { signature in
            digest.withUnsafeBufferPointer { digest in
                storerelay_p256_key_table_verify(table, digest.baseAddress, signature.baseAddress, scratch)
            }
        }
        let kept = scratchPool.withLock { pool in
            guard pool.count < P256KeyTable.pooledScratch else { return false }
            pool.append(scratch)
            return true
        }
        if !kept { BN_CTX_free(scratch) }
        return result < 0 ? nil : result == 1
    }
}
