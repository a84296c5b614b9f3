internal import CStoreRelayShims

/// SHA-256 (FIPS 180-4) through OpenSSL.
public enum SHA256 {
    /// A running hash: a plain value, so a prefix hashed once can be copied and continued (a
    /// JWS's header, shared by every JWS signed with the same chain).
    public struct State: Sendable {
        private var raw = storerelay_sha256_state()

        public init() { storerelay_sha256_begin(&raw) }

        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            storerelay_sha256_update(&raw, bytes.baseAddress, bytes.count)
        }

        public mutating func update(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { update($0) }
        }

        /// The digest of everything absorbed so far; the state itself can go on.
        public func digest() -> [UInt8] {
            var spent = raw
            var digest = [UInt8](repeating: 0, count: 32)
            digest.withUnsafeMutableBufferPointer { storerelay_sha256_finish(&spent, $0.baseAddress) }
            return digest
        }
    }

    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var state = State()
        state.update(bytes)
        return state.digest()
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
