internal import COpenSSL
public import StoreRelayCore
public import StoreRelayCrypto

/// Verifies `leaf ← intermediates ← trusted root` chains at a given time.
///
/// The `X509_STORE` holds only the trusted roots given at init. Certificates that arrive with
/// the data (a JWS `x5c`) are passed as untrusted intermediates, so a root sent by the
/// signer is never trusted just because it was sent; callers should not pass it at all.
///
/// `@unchecked Sendable`: the store is filled in `init` and only read afterwards; OpenSSL
/// guards an `X509_STORE` with its own lock, and each verification has its own context.
public final class CertificateChainVerifier: @unchecked Sendable {
    private let store: OpaquePointer
    /// The roots this verifier trusts, kept alive for as long as the store refers to them.
    public let trustedRoots: [Certificate]

    public init(trustedRoots: [Certificate]) throws(CryptoError) {
        guard let store = X509_STORE_new() else { throw CryptoError.fromQueue(.internalFailure, "X509_STORE_new failed") }
        self.store = store
        self.trustedRoots = trustedRoots
        for root in trustedRoots {
            // add_cert takes its own reference; a duplicate root is an error we can ignore.
            if X509_STORE_add_cert(store, root.pointer) != 1 { OpenSSLErrorQueue.clear() }
        }
    }

    deinit { X509_STORE_free(store) }

    /// Verifies that `leaf` is signed by `intermediates[0]`, each intermediate by the next, and
    /// the last by a trusted root, with every certificate valid at `time` (seconds precision).
    /// Returns the chain OpenSSL built: leaf, the intermediates, then the trusted root.
    public func verify(leaf: Certificate, intermediates: [Certificate], at time: Timestamp) throws(CryptoError) -> VerifiedChain {
        guard let context = X509_STORE_CTX_new() else { throw CryptoError.fromQueue(.internalFailure, "X509_STORE_CTX_new failed") }
        defer { X509_STORE_CTX_free(context) }
        guard let untrusted = OPENSSL_sk_new_null() else { throw CryptoError.fromQueue(.internalFailure, "OPENSSL_sk_new_null failed") }
        // The stack borrows the X509 pointers (no free of its elements); `intermediates`
        // outlives it because it is used again after the stack is freed.
        defer { OPENSSL_sk_free(untrusted) }
        for certificate in intermediates {
            guard OPENSSL_sk_push(untrusted, UnsafeRawPointer(certificate.pointer)) > 0 else {
                throw CryptoError.fromQueue(.internalFailure, "OPENSSL_sk_push failed")
            }
        }
        guard X509_STORE_CTX_init(context, store, leaf.pointer, untrusted) == 1 else {
            throw CryptoError.fromQueue(.internalFailure, "X509_STORE_CTX_init failed")
        }
        X509_STORE_CTX_set_time(context, 0, time_t(time.seconds))

        let result = X509_verify_cert(context)
        guard result == 1 else {
            let error = X509_STORE_CTX_get_error(context)
            let depth = X509_STORE_CTX_get_error_depth(context)
            let reason = String(cString: X509_verify_cert_error_string(Int(error)))
            OpenSSLErrorQueue.clear()
            let code: CryptoError.Code = switch error {
            case X509_V_ERR_CERT_HAS_EXPIRED: .certificateExpired
            case X509_V_ERR_CERT_NOT_YET_VALID: .certificateNotYetValid
            default: .untrustedChain
            }
            throw CryptoError(code, "certificate chain rejected at depth \(depth): \(reason)")
        }

        var built: [Certificate] = []
        if let chain = X509_STORE_CTX_get0_chain(context) {
            for index in 0..<OPENSSL_sk_num(chain) {
                guard let element = OPENSSL_sk_value(chain, index),
                      let certificate = Certificate(retaining: OpaquePointer(element))
                else { throw CryptoError(.internalFailure, "cannot read the verified chain") }
                built.append(certificate)
            }
        }
        // OpenSSL may find a shorter path (a leaf issued directly by a root); the caller asked
        // for exactly these intermediates, in this order, then a root.
        guard built.count == intermediates.count + 2,
              zip(built.dropFirst(), intermediates).allSatisfy({ $0.isSame(as: $1) })
        else {
            throw CryptoError(.untrustedChain, "certificate chain rejected: the trusted path does not go through the given intermediates")
        }
        withExtendedLifetime(intermediates) {}
        return VerifiedChain(certificates: built)
    }
}

/// A chain that verified: leaf first, trusted root last.
public struct VerifiedChain: Sendable {
    public let certificates: [Certificate]

    /// The latest `notBefore` in the chain: before it, some certificate is not yet valid.
    public var validFrom: Timestamp { certificates.map(\.notBefore).max() ?? Timestamp(milliseconds: 0) }
    /// The earliest `notAfter` in the chain: after it, some certificate has expired.
    public var validUntil: Timestamp { certificates.map(\.notAfter).min() ?? Timestamp(milliseconds: 0) }

    /// Whether every certificate is valid at `time`, at the second precision X.509 uses and
    /// as OpenSSL judges it: the second of `notAfter` is already past it.
    public func isValid(at time: Timestamp) -> Bool {
        let seconds = Timestamp(seconds: time.seconds)
        return validFrom <= seconds && seconds < validUntil
    }
}
