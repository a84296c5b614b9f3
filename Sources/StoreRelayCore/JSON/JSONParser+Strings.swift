/// String scanning: the bulk of every App Store payload (base64 JWS segments, certificates,
/// ids), so the run of bytes that need no attention is skipped eight at a time.
extension JSONParser {
    /// Advances over string bytes that are not `"`, `\` or a control character, OR-ing them
    /// into `seen` (so the caller knows whether any was non-ASCII).
    @inline(__always)
    private mutating func skipPlainStringBytes(seen: inout UInt64) {
        let count = bytes.count
        if let base = bytes.baseAddress {
            while index &+ 8 <= count {
                let word = ByteWords.load(base, index)
                let attention = ByteWords.matches(word, UInt8(ascii: "\"")) | ByteWords.matches(word, UInt8(ascii: "\\"))
                    | ByteWords.below(word, 0x20)
                if attention != 0 { break }
                seen |= word
                index &+= 8
            }
        }
        while index < count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { return }
            seen |= UInt64(byte)
            index &+= 1
        }
    }

    mutating func parseString() throws(JSONError) -> String {
        index += 1  // opening quote
        let start = index
        var seen: UInt64 = 0
        // Fast path: no escapes, so the bytes between the quotes are the string. Pure ASCII
        // (base64 JWS segments, ids: most of what Apple sends) needs no UTF-8 validation.
        skipPlainStringBytes(seen: &seen)
        guard index < bytes.count else { throw error("unterminated string") }
        if bytes[index] == UInt8(ascii: "\"") {
            let slice = UnsafeBufferPointer(rebasing: bytes[start..<index])
            index += 1
            if seen & ByteWords.highBits == 0 { return String(decoding: slice, as: UTF8.self) }
            guard let string = String(validating: slice, as: UTF8.self) else {
                throw JSONError(offset: start, reason: "invalid UTF-8 in a string")
            }
            return string
        }
        // Escapes: collect the unescaped bytes, then validate the whole as UTF-8.
        var utf8: [UInt8] = []
        utf8.reserveCapacity(index - start + 16)
        var runStart = start
        while true {
            utf8.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[runStart..<index]))
            guard index < bytes.count else { throw error("unterminated string") }
            switch bytes[index] {
            case UInt8(ascii: "\""):
                index += 1
                guard let string = String(validating: utf8, as: UTF8.self) else {
                    throw JSONError(offset: start, reason: "invalid UTF-8 in a string")
                }
                return string
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &utf8)
            default:
                throw error("control character in a string")
            }
            runStart = index
            skipPlainStringBytes(seen: &seen)
        }
    }

    private mutating func parseEscape(into utf8: inout [UInt8]) throws(JSONError) {
        guard let byte = peek() else { throw error("unterminated escape") }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): utf8.append(UInt8(ascii: "\""))
        case UInt8(ascii: "\\"): utf8.append(UInt8(ascii: "\\"))
        case UInt8(ascii: "/"): utf8.append(UInt8(ascii: "/"))
        case UInt8(ascii: "b"): utf8.append(0x08)
        case UInt8(ascii: "f"): utf8.append(0x0C)
        case UInt8(ascii: "n"): utf8.append(0x0A)
        case UInt8(ascii: "r"): utf8.append(0x0D)
        case UInt8(ascii: "t"): utf8.append(0x09)
        case UInt8(ascii: "u"):
            var scalar = try parseHex4()
            if (0xD800..<0xDC00).contains(scalar) {
                // A high surrogate must be followed by an escaped low surrogate.
                guard peek() == UInt8(ascii: "\\"), index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "u") else {
                    throw error("unpaired surrogate")
                }
                index += 2
                let low = try parseHex4()
                guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
                scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            } else if (0xDC00..<0xE000).contains(scalar) {
                throw error("unpaired surrogate")
            }
            // Surrogates are excluded above, so every value left is a scalar.
            UTF8.encode(Unicode.Scalar(scalar)!) { utf8.append($0) }
        default:
            throw error("invalid escape")
        }
    }

    private mutating func parseHex4() throws(JSONError) -> UInt32 {
        guard index + 4 <= bytes.count else { throw error("short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }
}
