/// What the clients' URL parsers (`RedisURL`, `AMQPURL`) share: decoding the percent escapes
/// of credentials and paths, and error messages that never echo a password.
enum URLText {
    /// `text` with each `%XY` decoded; `what` names the part in the error, e.g. "the Redis
    /// URL's credentials".
    static func percentDecoded(_ text: Substring, in what: String) throws(AddressError) -> String {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(HTTPSyntax.hexValue), let low = iterator.next().flatMap(HTTPSyntax.hexValue) else {
                throw AddressError("a '%' in \(what) is not followed by two hex digits")
            }
            bytes.append(UInt8(high << 4 | low))
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The text with everything before its last `@` hidden: error messages must not echo a
    /// password, whatever the rest of the text looks like.
    static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return String(text.prefix(80)) }
        return "***" + String(text[at...].prefix(80))
    }
}
