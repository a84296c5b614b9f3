internal import COpenSSL

/// An RSA public key for RS256 (RFC 7518 §3.3: RSASSA-PKCS1-v1_5 with SHA-256), the algorithm
/// Google signs Pub/Sub push tokens and OAuth2 assertions with. The one Swift owner of an
/// OpenSSL `EVP_PKEY*`, built from a JWK's modulus and exponent through `EVP_PKEY_fromdata`.
///
/// `@unchecked Sendable`: never mutated after init; each check uses its own `EVP_MD_CTX`.
public final class RSAPublicKey: @unchecked Sendable {
    let pointer: OpaquePointer
    /// The modulus size in bits, decided once at init.
    public let bits: Int

    /// RS256 with a modulus under 2048 bits is refused (NIST SP 800-131A); Google's keys are
    /// 2048 bits. The upper bound keeps a hostile key set from making every check slow.
    public static let minimumBits = 2048
    public static let maximumBits = 8192

    package init(taking pointer: OpaquePointer) {
        self.pointer = pointer
        bits = Int(EVP_PKEY_get_bits(pointer))
    }

    deinit { EVP_PKEY_free(pointer) }

    /// Builds the key from a JWK's `n` and `e` (big-endian unsigned bytes, base64url-decoded by
    /// the caller). A modulus outside 2048–8192 bits or an even or tiny exponent is refused.
    public convenience init(modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) {
        let modulus = modulus.drop { $0 == 0 }
        let exponent = exponent.drop { $0 == 0 }
        let modulusBits = modulus.isEmpty ? 0 : (modulus.count - 1) * 8 + (8 - modulus.first!.leadingZeroBitCount)
        guard (RSAPublicKey.minimumBits...RSAPublicKey.maximumBits).contains(modulusBits) else {
            throw CryptoError(.unsupportedKey, "an RSA modulus of \(modulusBits) bits is outside 2048–8192")
        }
        guard let last = exponent.last, last & 1 == 1, exponent.count <= 8, exponent.count > 1 || last >= 3 else {
            throw CryptoError(.invalidKey, "the RSA exponent is not an odd number of at least 3")
        }
        let key = try RSAPublicKey.fromData(modulus: Array(modulus), exponent: Array(exponent))
        self.init(taking: key)
    }

    /// The parameter names as static C strings: the builder keeps the name's pointer until
    /// `OSSL_PARAM_BLD_to_param`, so a temporary bridged from a Swift `String` would dangle.
    private static var modulusName: UnsafePointer<CChar> { cString("n") }
    private static var exponentName: UnsafePointer<CChar> { cString("e") }
    private static func cString(_ text: StaticString) -> UnsafePointer<CChar> {
        UnsafeRawPointer(text.utf8Start).assumingMemoryBound(to: CChar.self)
    }

    private static func fromData(modulus: [UInt8], exponent: [UInt8]) throws(CryptoError) -> OpaquePointer {
        guard let builder = OSSL_PARAM_BLD_new() else {
            throw CryptoError.fromQueue(.internalFailure, "OSSL_PARAM_BLD_new failed")
        }
        defer { OSSL_PARAM_BLD_free(builder) }
        let n = modulus.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        let e = exponent.withUnsafeBufferPointer { BN_bin2bn($0.baseAddress, Int32($0.count), nil) }
        defer { BN_free(n); BN_free(e) }
        guard let n, let e,
              OSSL_PARAM_BLD_push_BN(builder, RSAPublicKey.modulusName, n) == 1,
              OSSL_PARAM_BLD_push_BN(builder, RSAPublicKey.exponentName, e) == 1,
              let parameters = OSSL_PARAM_BLD_to_param(builder)
        else { throw CryptoError.fromQueue(.internalFailure, "cannot build the RSA key parameters") }
        defer { OSSL_PARAM_free(parameters) }
        guard let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) else {
            throw CryptoError.fromQueue(.internalFailure, "cannot create an RSA key context")
        }
        defer { EVP_PKEY_CTX_free(context) }
        var key: OpaquePointer?
        guard EVP_PKEY_fromdata_init(context) == 1,
              EVP_PKEY_fromdata(context, &key, STORERELAY_EVP_PKEY_PUBLIC_KEY, parameters) == 1,
              let key
        else { throw CryptoError.fromQueue(.invalidKey, "OpenSSL refused the RSA public key") }
        return key
    }

    /// Verifies an RS256 signature over `message` with OpenSSL's `EVP_DigestVerify`. Any
    /// malformed input or wrong signature is `false`; the error queue is left empty.
    public func isValidRS256Signature(_ signature: [UInt8], for message: [UInt8]) -> Bool {
        // PKCS#1 v1.5 signatures are exactly the modulus's length; anything else is forged.
        guard signature.count == (bits + 7) / 8 else { return false }
        guard let context = EVP_MD_CTX_new() else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, pointer, nil) == 1 else {
            OpenSSLErrorQueue.clear()
            return false
        }
        let result = signature.withUnsafeBufferPointer { signature in
            message.withUnsafeBufferPointer { message in
                EVP_DigestVerify(context, signature.baseAddress, signature.count, message.baseAddress, message.count)
            }
        }
        if result != 1 { OpenSSLErrorQueue.clear() }
        return result == 1
    }

    /// The modulus and public exponent as big-endian bytes: what a JWK's `n` and `e` hold.
    public func components() throws(CryptoError) -> (modulus: [UInt8], exponent: [UInt8]) {
        (try RSAPublicKey.bigNumber(OSSL_PKEY_PARAM_RSA_N, of: pointer),
         try RSAPublicKey.bigNumber(OSSL_PKEY_PARAM_RSA_E, of: pointer))
    }

    static func bigNumber(_ name: UnsafePointer<CChar>, of key: OpaquePointer) throws(CryptoError) -> [UInt8] {
        var number: OpaquePointer?
        guard EVP_PKEY_get_bn_param(key, name, &number) == 1, let number else {
            throw CryptoError.fromQueue(.internalFailure, "cannot read an RSA key parameter")
        }
        defer { BN_free(number) }
        var bytes = [UInt8](repeating: 0, count: Int((BN_num_bits(number) + 7) / 8))
        _ = bytes.withUnsafeMutableBufferPointer { BN_bn2bin(number, $0.baseAddress) }
        return bytes
    }
}
