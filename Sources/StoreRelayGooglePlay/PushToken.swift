import StoreRelayCore

/// The bearer token on one Pub/Sub push, split and decoded but not yet trusted: a compact
/// JWS (RFC 7515 §7.1) whose header and claims are JSON objects.
///
/// Parsing is bounded and strict so that nothing hostile reaches the signature check in an
/// ambiguous form: at most `maximumLength` characters, exactly three base64url segments
/// without padding, JSON objects with no duplicate member names (a duplicate `alg` or `aud`
/// could be read one way here and another way by whoever minted it).
public struct PushToken: Sendable {
    /// Google's tokens are about 1 KiB; anything far larger is not one.
    public static let maximumLength = 8 * 1024

    /// The decoded JOSE header.
    public let header: JSONObject
    /// The decoded claims.
    public let claims: JSONObject
    /// `header.payload` as sent: what the signature covers.
    public let signingInput: [UInt8]
    public let signature: [UInt8]

    /// `alg` from the header, if it is a string.
    public var algorithm: String? { header["alg"]?.stringValue }
    /// `kid` from the header, if it is a string.
    public var keyId: String? { header["kid"]?.stringValue }

    /// Reads the token out of an `Authorization` header value: `Bearer <JWT>` (the scheme is
    /// case-insensitive, RFC 9110 §11.1), nothing else.
    public static func parse(authorization: String?) throws(GooglePlayError) -> PushToken {
        guard let authorization, !authorization.isEmpty else {
            throw GooglePlayError("The push has no Authorization header; the push subscription must have authentication enabled.")
        }
        guard authorization.utf8.count <= maximumLength + 16 else {
            throw GooglePlayError("The Authorization header is \(authorization.utf8.count) bytes; a push token is at most \(maximumLength).")
        }
        let bytes = Array(authorization.utf8)
        let scheme = Array("bearer ".utf8)
        let lowered = bytes.prefix(scheme.count).map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        guard bytes.count > scheme.count, lowered == scheme else {
            throw GooglePlayError("The Authorization header is not 'Bearer <token>'.")
        }
        var start = scheme.count
        while start < bytes.count, bytes[start] == 0x20 { start += 1 }
        return try parse(token: Array(bytes[start...]))
    }

    /// Parses a compact JWS.
    public static func parse(token bytes: [UInt8]) throws(GooglePlayError) -> PushToken {
        guard !bytes.isEmpty else { throw GooglePlayError("The bearer token is empty.") }
        guard bytes.count <= maximumLength else {
            throw GooglePlayError("The bearer token is \(bytes.count) bytes; a push token is at most \(maximumLength).")
        }
        let dot = UInt8(ascii: ".")
        let segments = bytes.split(separator: dot, omittingEmptySubsequences: false)
        guard segments.count == 3 else {
            throw GooglePlayError("The bearer token has \(segments.count) segments; a JWT has 3.")
        }
        guard !segments[0].isEmpty, !segments[1].isEmpty, !segments[2].isEmpty else {
            throw GooglePlayError("The bearer token has an empty segment (an unsigned token is never accepted).")
        }
        let header = try object(segments[0], "header")
        let claims = try object(segments[1], "claims")
        guard let signature = Base64.urlDecode(bytes: segments[2]) else {
            throw GooglePlayError("The bearer token's signature is not base64url.")
        }
        let signingInput = Array(bytes[..<(segments[0].count + 1 + segments[1].count)])
        return PushToken(header: header, claims: claims, signingInput: signingInput, signature: signature)
    }

    private static func object(_ segment: ArraySlice<UInt8>, _ what: String) throws(GooglePlayError) -> JSONObject {
        guard let decoded = Base64.urlDecode(bytes: segment) else {
            throw GooglePlayError("The bearer token's \(what) is not base64url.")
        }
        let value: JSONValue
        do {
            // Flat objects: no nesting is needed, and none is allowed to cost anything.
            value = try JSONValue.parse(decoded, maxDepth: 4)
        } catch {
            throw GooglePlayError("The bearer token's \(what) is not JSON (\(error.reason) at byte \(error.offset)).")
        }
        guard let object = value.objectValue else {
            throw GooglePlayError("The bearer token's \(what) is not a JSON object.")
        }
        return object
    }
}
