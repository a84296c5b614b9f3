import StoreRelayCrypto

/// Identifiers shaped like Apple's, from the CSPRNG so repeated runs never collide (the
/// gateway deduplicates on `notificationUUID`).
enum RandomIdentifiers {
    /// A random (version 4, RFC 9562 §5.4) UUID in lowercase, as Apple writes
    /// `notificationUUID`.
    static func uuid() -> String {
        var bytes = SecureRandom.bytes(16)
        bytes[6] = (bytes[6] & 0x0F) | 0x40  // version 4
        bytes[8] = (bytes[8] & 0x3F) | 0x80  // variant 10
        let hex = bytes.map { byte in
            let digits = Array("0123456789abcdef")
            return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
        }
        return [hex[0..<4], hex[4..<6], hex[6..<8], hex[8..<10], hex[10..<16]].map { $0.joined() }.joined(separator: "-")
    }

    /// `prefix` followed by random decimal digits up to `length` characters, like Apple's
    /// transaction ids (`2000001024993299` in sandbox, 15-16 digits in production).
    static func digits(prefix: String, length: Int) -> String {
        var text = prefix
        for byte in SecureRandom.bytes(max(0, length - prefix.count)) {
            text.append(Character(Unicode.Scalar(0x30 + byte % 10)))
        }
        return text
    }
}
