internal import COpenSSL

/// SHA-256 (FIPS 180-4) through OpenSSL's one-shot EVP digest.
public enum SHA256 {
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        let ok = bytes.withUnsafeBytes { input in
            digest.withUnsafeMutableBytes { output in
                EVP_Digest(input.baseAddress, input.count, output.baseAddress?.assumingMemoryBound(to: UInt8.self),
                           &length, EVP_sha256(), nil)
            }
        }
        // EVP_Digest with a built-in algorithm fails only when memory runs out.
        precondition(ok == 1 && length == 32, "SHA-256 failed")
        return digest
    }

    /// The digest as lowercase hexadecimal.
    public static func hexHash(_ bytes: [UInt8]) -> String {
        hex(hash(bytes))
    }

    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0xF)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
