/// Chunk-size lines of the chunked transfer coding (RFC 9112 §7.1), in both directions.
enum ChunkedCoding {
    /// The size of a chunk from its line (without CRLF): `1*HEXDIG *chunk-ext`. Extensions
    /// are checked for syntax and ignored, as no extension means anything to us.
    static func parseSizeLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        var index = line.startIndex
        var size = 0
        var digits = 0
        while index < line.endIndex, let value = HTTPSyntax.hexValue(line[index]) {
            // Over 15 hex digits cannot fit in Int and exceeds any body limit: saturate, and
            // let the size check report it as too large.
            size = digits >= 15 ? Int.max : size * 16 + value
            digits += 1
            index += 1
        }
        guard digits > 0 else { throw HTTPParseError(.invalidChunkSize, "chunk size is not hexadecimal") }
        try validateExtensions(line[index...])
        return size
    }

    /// `*( BWS ";" BWS ext-name [ BWS "=" BWS ext-val ] )` where ext-val is a token or a
    /// quoted-string.
    private static func validateExtensions(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) {
        let invalid = HTTPParseError(.invalidChunkExtension, "malformed chunk extension")
        var index = bytes.startIndex
        func skipWhitespace() {
            while index < bytes.endIndex, HTTPSyntax.isWhitespace(bytes[index]) { index += 1 }
        }
        func token() -> Bool {
            let start = index
            while index < bytes.endIndex, HTTPSyntax.isTokenChar(bytes[index]) { index += 1 }
            return index > start
        }
        skipWhitespace()
        while index < bytes.endIndex {
            guard bytes[index] == UInt8(ascii: ";") else { throw invalid }
            index += 1
            skipWhitespace()
            guard token() else { throw invalid }
            skipWhitespace()
            if index < bytes.endIndex, bytes[index] == UInt8(ascii: "=") {
                index += 1
                skipWhitespace()
                if index < bytes.endIndex, bytes[index] == UInt8(ascii: "\"") {
                    guard skipQuotedString(bytes, &index) else { throw invalid }
                } else {
                    guard token() else { throw invalid }
                }
                skipWhitespace()
            }
        }
    }

    /// Moves `index` past a quoted-string (RFC 9110 §5.6.4) starting at its opening quote.
    private static func skipQuotedString(_ bytes: ArraySlice<UInt8>, _ index: inout Int) -> Bool {
        index += 1
        while index < bytes.endIndex {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return true
            case UInt8(ascii: "\\"):
                guard index + 1 < bytes.endIndex, HTTPSyntax.isFieldValueChar(bytes[index + 1]) else { return false }
                index += 2
            default:
                guard HTTPSyntax.isFieldValueChar(byte) else { return false }
                index += 1
            }
        }
        return false
    }
}
