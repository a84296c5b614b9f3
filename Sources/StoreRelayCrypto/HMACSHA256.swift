internal import COpenSSL

/// HMAC-SHA256 (RFC 2104), used for Standard Webhooks signatures.
public enum HMACSHA256 {
    /// The 32-byte MAC of `message` under `key`.
    public static func authenticationCode(for message: [UInt8], key: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        // An empty key is legal for HMAC but must still be a non-NULL pointer for OpenSSL.
        let keyBytes = key.isEmpty ? [0] : key
        let result = keyBytes.withUnsafeBufferPointer { k in
            message.withUnsafeBufferPointer { m in
                // One-shot HMAC() is not deprecated in OpenSSL 3 (HMAC_CTX_* is).
                HMAC(EVP_sha256(), k.baseAddress, Int32(key.count), m.baseAddress, m.count, &out, &length)
            }
        }
        precondition(result != nil && length == 32, "HMAC-SHA256 cannot fail on valid buffers")
        return Array(out[0..<32])
    }

    /// Whether `mac` is the MAC of `message` under `key`, compared in constant time.
    public static func isValid(_ mac: [UInt8], for message: [UInt8], key: [UInt8]) -> Bool {
        ConstantTime.equals(authenticationCode(for: message, key: key), mac)
    }
}
