/// The hash slot Redis Cluster puts a key in: CRC16 (XMODEM) of the key, or of its hash tag
/// (the text between the first `{` and the next `}`, when not empty), modulo 16384.
/// <https://redis.io/docs/latest/operate/oss_and_stack/reference/cluster-spec/#hash-tags>
public enum RedisHashSlot {
    public static let count = 16_384

    public static func of(_ key: String) -> Int {
        of(Array(key.utf8))
    }

    public static func of(_ key: [UInt8]) -> Int {
        var hashed = key[...]
        if let open = key.firstIndex(of: UInt8(ascii: "{")),
           let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1 {
            hashed = key[(open + 1)..<close]
        }
        return Int(crc16(hashed)) & (count - 1)
    }

    /// CRC-16/XMODEM: polynomial 0x1021, initial value 0, no reflection (the cluster spec's).
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 {
                crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
            }
        }
        return crc
    }
}
