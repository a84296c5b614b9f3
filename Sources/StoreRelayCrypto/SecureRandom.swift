internal import COpenSSL

/// Bytes from OpenSSL's CSPRNG, for tokens, keys and jitter that an attacker must not guess.
public enum SecureRandom {
    /// `count` random bytes. Traps if the CSPRNG fails: continuing with predictable bytes
    /// would be worse than stopping.
    public static func bytes(_ count: Int) -> [UInt8] {
        precondition(count >= 0)
        var out = [UInt8](repeating: 0, count: count)
        guard count > 0 else { return out }
        let result = out.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
        precondition(result == 1, "RAND_bytes failed: \(OpenSSLErrorQueue.drain())")
        return out
    }

    /// `count` random bytes as lowercase hex (a token of `2 * count` characters).
    public static func hexToken(_ count: Int) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(count * 2)
        for byte in bytes(count) {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
