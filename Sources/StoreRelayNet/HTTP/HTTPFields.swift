/// Header and trailer field lines (RFC 9112 §5), strictly: no obs-fold, names are tokens,
/// values free of control characters. Shared by requests and responses.
package enum HTTPFields {
    /// Header (or trailer) field lines separated by CRLF (RFC 9112 §5).
    package static func parse(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPHeaders {
        var headers = HTTPHeaders()
        guard !bytes.isEmpty else { return headers }
        for line in bytes.split(separator: HTTPSyntax.lf, omittingEmptySubsequences: false) {
            let line = line.last == HTTPSyntax.cr ? line.dropLast() : line
            guard let first = line.first, !HTTPSyntax.isWhitespace(first) else {
                throw HTTPParseError(.obsoleteLineFolding, "header line starts with whitespace (obs-fold)")
            }
            guard let colon = line.firstIndex(of: HTTPSyntax.colon), HTTPSyntax.isToken(line[line.startIndex..<colon]) else {
                throw HTTPParseError(.invalidHeaderName, "header name is not a token")
            }
            let value = line[(colon + 1)...].drop(while: HTTPSyntax.isWhitespace)
                .reversed().drop(while: HTTPSyntax.isWhitespace).reversed()
            guard value.allSatisfy(HTTPSyntax.isFieldValueChar) else {
                throw HTTPParseError(.invalidHeaderValue, "header value contains control characters")
            }
            headers.add(name: String(decoding: line[line.startIndex..<colon], as: UTF8.self),
                        value: String(decoding: value, as: UTF8.self))
        }
        return headers
    }

    /// The length that every `Content-Length` value (and every comma-separated member of one)
    /// agrees on (RFC 9110 §8.6): decimal digits only, saturating at `Int.max` (over any limit).
    package static func contentLength(_ values: [String]) throws(HTTPParseError) -> Int {
        var length: Int?
        for member in values.flatMap({ $0.split(separator: ",", omittingEmptySubsequences: false) }) {
            let digits = member.utf8.drop(while: HTTPSyntax.isWhitespace).reversed().drop(while: HTTPSyntax.isWhitespace).reversed()
            guard !digits.isEmpty, digits.allSatisfy(HTTPSyntax.isDigit) else {
                throw HTTPParseError(.invalidContentLength, "Content-Length is not a decimal number")
            }
            // More than 18 digits cannot fit in Int, and is over any limit anyway: saturate.
            let value = digits.count > 18 ? Int.max : digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) }
            if let length, length != value {
                throw HTTPParseError(.conflictingContentLength, "Content-Length values disagree")
            }
            length = value
        }
        guard let length else { throw HTTPParseError(.invalidContentLength, "Content-Length is empty") }
        return length
    }
}
