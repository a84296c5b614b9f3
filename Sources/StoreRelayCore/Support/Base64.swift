/// Base64 (RFC 4648 §4) and Base64URL (RFC 4648 §5) without Foundation.
///
/// Decoding is strict on purpose: signatures, certificates and webhook secrets are compared
/// or hashed as bytes, so one byte string must have exactly one accepted text form. Decoders
/// reject whitespace, characters outside the alphabet, wrong padding and non-zero pad bits
/// (RFC 4648 §3.5 allows rejecting them) and return `nil` instead of guessing.
public enum Base64 {
    private static let standardAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let urlAlphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Reverse tables: 0...63 for alphabet characters, 0xFF for anything else.
    private static let standardTable = makeTable(standardAlphabet)
    private static let urlTable = makeTable(urlAlphabet)

    private static func makeTable(_ alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 0xFF, count: 256)
        for (index, char) in alphabet.enumerated() { table[Int(char)] = UInt8(index) }
        return table
    }

    /// Standard Base64 with `=` padding.
    public static func encode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(Array(bytes), alphabet: standardAlphabet, pad: true)
    }

    /// Base64URL without padding, as JWS (RFC 7515 §2) writes every segment.
    public static func urlEncode<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        encode(Array(bytes), alphabet: urlAlphabet, pad: false)
    }

    /// Decodes standard Base64; the input length must be a multiple of 4 with `=` padding.
    public static func decode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 4 == 0 else { return nil }
        var end = chars.count
        if end > 0 && chars[end - 1] == UInt8(ascii: "=") { end -= 1 }
        if end > 0 && chars[end - 1] == UInt8(ascii: "=") { end -= 1 }
        // Two or fewer pad characters, and only as many as the final group needs.
        guard chars.count - end == (4 - end % 4) % 4 else { return nil }
        return decode(chars[0..<end], table: standardTable)
    }

    /// Decodes Base64URL without padding (a `=` anywhere is rejected, as JWS requires).
    public static func urlDecode<Text: StringProtocol>(_ text: Text) -> [UInt8]? {
        decode(Array(text.utf8)[...], table: urlTable)
    }

    private static func encode(_ bytes: [UInt8], alphabet: [UInt8], pad: Bool) -> String {
        var out = [UInt8]()
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let value = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            out.append(alphabet[Int(value >> 6 & 63)])
            out.append(alphabet[Int(value & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest > 0 {
            var value = UInt32(bytes[index]) << 16
            if rest == 2 { value |= UInt32(bytes[index + 1]) << 8 }
            out.append(alphabet[Int(value >> 18 & 63)])
            out.append(alphabet[Int(value >> 12 & 63)])
            if rest == 2 { out.append(alphabet[Int(value >> 6 & 63)]) }
            if pad { out.append(contentsOf: Array(repeating: UInt8(ascii: "="), count: 3 - rest)) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded symbols; a final group of 1 symbol is impossible, and the unused low
    /// bits of a final group of 2 or 3 symbols must be zero.
    ///
    /// Four symbols at a time into a preallocated buffer: JWS segments of App Store payloads
    /// are tens of kilobytes and this runs for every one of them.
    private static func decode(_ chars: ArraySlice<UInt8>, table: [UInt8]) -> [UInt8]? {
        chars.withUnsafeBufferPointer { decode($0, table: table) }
    }

    private static func decode(_ input: UnsafeBufferPointer<UInt8>, table: [UInt8]) -> [UInt8]? {
        let count = input.count
        guard count % 4 != 1 else { return nil }
        let outputCount = count / 4 * 3 + (count % 4 == 0 ? 0 : count % 4 - 1)
        var valid = true
        let output = [UInt8](unsafeUninitializedCapacity: outputCount) { buffer, initialized in
            initialized = 0
            table.withUnsafeBufferPointer { table in
                // Alphabet values are 0...63; 0xFF marks anything else, so any of the two
                // high bits set means an invalid symbol.
                var i = 0, o = 0
                while i + 4 <= count {
                    let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                    let c = table[Int(input[i + 2])], d = table[Int(input[i + 3])]
                    guard (a | b | c | d) & 0xC0 == 0 else { valid = false; return }
                    let v = UInt32(a) << 18 | UInt32(b) << 12 | UInt32(c) << 6 | UInt32(d)
                    buffer[o] = UInt8(truncatingIfNeeded: v >> 16)
                    buffer[o + 1] = UInt8(truncatingIfNeeded: v >> 8)
                    buffer[o + 2] = UInt8(truncatingIfNeeded: v)
                    i += 4
                    o += 3
                }
                switch count - i {
                case 2:
                    let a = table[Int(input[i])], b = table[Int(input[i + 1])]
                    guard (a | b) & 0xC0 == 0, b & 0x0F == 0 else { valid = false; return }
                    buffer[o] = a << 2 | b >> 4
                case 3:
                    let a = table[Int(input[i])], b = table[Int(input[i + 1])], c = table[Int(input[i + 2])]
                    guard (a | b | c) & 0xC0 == 0, c & 0x03 == 0 else { valid = false; return }
                    buffer[o] = a << 2 | b >> 4
                    buffer[o + 1] = (b & 0x0F) << 4 | c >> 2
                default:
                    break
                }
            }
            if valid { initialized = outputCount }
        }
        return valid ? output : nil
    }

    /// Decodes Base64URL without padding straight from bytes (a JWS segment), without a
    /// detour through `String`.
    public static func urlDecode(bytes: ArraySlice<UInt8>) -> [UInt8]? {
        decode(bytes, table: urlTable)
    }

    /// Decodes Base64URL without padding from bytes lent for the call (a JWS segment inside
    /// a larger buffer), without copying them first.
    public static func urlDecode(utf8 bytes: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        decode(bytes, table: urlTable)
    }
}
