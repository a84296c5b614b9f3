/// The ways FuzzES256Verdict builds a signature, and the numbers at ECDSA's edges.
enum P256Edges {
    /// The order n and the field prime p of P-256, big-endian.
    static let order: [UInt8] = bytes("FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")
    static let prime: [UInt8] = bytes("FFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF")
    static let one: [UInt8] = [UInt8](repeating: 0, count: 31) + [1]

    /// 0, 1, n − 1, n, n + 1, p − 1, p, 2²⁵⁶ − 1.
    static let values: [[UInt8]] = [
        [UInt8](repeating: 0, count: 32), one, subtract(order, one), order, add(order, one),
        subtract(prime, one), prime, [UInt8](repeating: 0xFF, count: 32),
    ]

    static let ways: UInt8 = 7

    /// A signature built the way `way` says from `material` (64 bytes) and, for most ways,
    /// a real signature of the message (`sign`).
    static func signature(way: UInt8, material: [UInt8], sign: () -> [UInt8]) -> [UInt8] {
        switch way % ways {
        case 0:  // the material itself
            return material
        case 1:  // a real signature, XOR the material
            return zip(sign(), material).map { $0 ^ $1 }
        case 2:  // the twin (r, n − s), XOR the material
            let real = sign()
            return zip(Array(real[0..<32]) + subtract(order, Array(real[32..<64])), material).map { $0 ^ $1 }
        case 3:  // r replaced by an edge value
            let real = sign()
            return values[Int(material[0]) % values.count] + Array(real[32..<64])
        case 4:  // s replaced by an edge value
            let real = sign()
            return Array(real[0..<32]) + values[Int(material[0]) % values.count]
        case 5:  // r wrapped: r + n, r + (p − n), r − n (mod 2²⁵⁶)
            let real = sign()
            let r = Array(real[0..<32])
            let wraps = [add(r, order), add(r, subtract(prime, order)), subtract(r, order)]
            return wraps[Int(material[0]) % wraps.count] + Array(real[32..<64])
        default:  // a length other than 64
            return Array((sign() + material).prefix(Int(material[0]) % 130))
        }
    }

    /// a + b and a − b for 32-byte big-endian numbers, modulo 2²⁵⁶.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32), carry = 0
        for index in (0..<32).reversed() {
            let sum = Int(a[index]) + Int(b[index]) + carry
            result[index] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        return result
    }

    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32), borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(a[index]) - Int(b[index]) - borrow
            result[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return result
    }

    private static func bytes(_ hex: String) -> [UInt8] {
        let digits = Array(hex.utf8)
        return stride(from: 0, to: digits.count, by: 2).map { UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)! }
    }
}
