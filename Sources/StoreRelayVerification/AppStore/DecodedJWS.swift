#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
public import StoreRelayCore
import StoreRelayCrypto

/// A JWS in compact serialization (RFC 7515 §7.1), split and decoded but not yet trusted.
///
/// Decoding does no cryptography, so everything it rejects is `.malformed`. The header and
/// payload must be JSON objects; the signature is kept as raw bytes for `SignedDataVerifier`.
public struct DecodedJWS: Sendable {
    /// The protected header (`alg`, `x5c`, ...).
    public let header: JSONObject
    /// The decoded payload.
    public let payload: JSONObject
    /// SHA-256 of `BASE64URL(header) '.' BASE64URL(payload)`, the bytes the signature
    /// covers: hashed while the bytes are lent, continuing from the header's cached state.
    let signingInputDigest: [UInt8]
    /// The third segment, decoded: raw `R‖S` for ES256.
    let signature: [UInt8]
    /// The header segment as sent (base64url), to tell a nested JWS whose header is the
    /// notification's (`NestedSignatureCheck.chainEquality`). Shared with the header cache's
    /// entry when the header was known, so JWS with one header share one buffer.
    let headerSegment: [UInt8]

    /// A compact JWS is far smaller than this; the cap bounds the work a hostile input causes.
    static let maximumLength = 1 << 20

    /// Deepest nesting accepted in a header or payload (Apple's nest four levels at most).
    /// Well under JSONValue's default of 64 because a payload is stored deeper than it was
    /// sent: the normalized event holds a nested payload one level down, and the journal
    /// and dead-letter records hold the event one more. Those are read back after a restart
    /// with the default depth, so a payload accepted here must never make them unreadable.
    static let maximumDepth = 32

    /// Decodes a compact JWS; `headers` remembers headers already decoded (see `JWSHeaderCache`).
    public init(compact text: String, headers: JWSHeaderCache? = nil) throws(VerificationError) {
        var text = text
        // Native strings are contiguous UTF-8: decode in place rather than copy to an array.
        let decoded = text.withUTF8 { bytes in
            Result { () throws(VerificationError) in try DecodedJWS(compactUTF8: bytes, headers: headers) }
        }
        self = try decoded.get()
    }

    /// Decodes a compact JWS from bytes lent for the call; nothing of them is kept whole.
    public init(compactUTF8 bytes: UnsafeBufferPointer<UInt8>, headers: JWSHeaderCache? = nil) throws(VerificationError) {
        guard bytes.count <= DecodedJWS.maximumLength else {
            throw .malformed(.notJWS, "the JWS is longer than \(DecodedJWS.maximumLength) bytes")
        }
        guard let firstDot = DecodedJWS.dot(in: bytes, from: 0),
              let secondDot = DecodedJWS.dot(in: bytes, from: firstDot + 1),
              DecodedJWS.dot(in: bytes, from: secondDot + 1) == nil
        else {
            let segments = bytes.count(where: { $0 == UInt8(ascii: ".") }) + 1
            throw .malformed(.notJWS, "the value is not a compact JWS (expected 3 dot-separated segments, found \(segments))")
        }
        guard firstDot > 0, secondDot > firstDot + 1 else {
            throw .malformed(.notJWS, "the JWS has an empty header or payload segment")
        }
        let headerSegment = UnsafeBufferPointer(rebasing: bytes[..<firstDot])
        guard let payloadBytes = Base64.urlDecode(utf8: UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])),
              let signature = Base64.urlDecode(utf8: UnsafeBufferPointer(rebasing: bytes[(secondDot + 1)...]))
        else { throw .malformed(.invalidBase64, "a JWS segment is not valid unpadded base64url") }
        var hash: SHA256.State
        if let known = headers?.header(for: headerSegment) {
            (header, hash, self.headerSegment) = known
        } else {
            guard let headerBytes = Base64.urlDecode(utf8: headerSegment) else {
                throw .malformed(.invalidBase64, "a JWS segment is not valid unpadded base64url")
            }
            header = try DecodedJWS.object(headerBytes, "header")
            hash = SHA256.State()
            hash.update(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[...firstDot])))
            self.headerSegment = Array(headerSegment)
            headers?.remember(header, hashedThroughDot: hash, for: self.headerSegment)
        }
        payload = try DecodedJWS.object(payloadBytes, "payload")
        hash.update(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[(firstDot + 1)..<secondDot])))
        signingInputDigest = hash.digest()
        self.signature = signature
    }

    /// The offset of the first `.` at or after `start` (memchr: the header and payload
    /// segments are kilobytes long).
    private static func dot(in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let base = bytes.baseAddress, start < bytes.count,
              let found = memchr(base + start, Int32(UInt8(ascii: ".")), bytes.count - start)
        else { return nil }
        return UnsafeRawPointer(base).distance(to: UnsafeRawPointer(found))
    }

    private static func object(_ bytes: [UInt8], _ part: String) throws(VerificationError) -> JSONObject {
        let value: JSONValue
        do {
            value = try JSONValue.parse(bytes, maxDepth: DecodedJWS.maximumDepth)
        } catch {
            throw .malformed(.invalidJSON, "the JWS \(part) is not valid JSON (\(error))")
        }
        guard let object = value.objectValue else {
            throw .malformed(.invalidJSON, "the JWS \(part) is not a JSON object")
        }
        return object
    }

    /// Whether this JWS's protected header is byte for byte `other`'s: the same algorithm and
    /// the same `x5c` chain. (Arrays sharing the header cache's buffer compare at once.)
    func hasSameHeader(as other: DecodedJWS) -> Bool { headerSegment == other.headerSegment }

    /// The header's `alg`, when it is a string.
    public var algorithm: String? { header["alg"]?.stringValue }

    /// The payload field holding the instant a JWS is verified at, as Apple's libraries choose
    /// it: app transactions have no `signedDate` and are verified at `receiptCreationDate`.
    public enum DateField: String, Sendable {
        case signedDate, receiptCreationDate

        /// For a JWS of unknown kind: an app transaction is the payload with `receiptType`.
        static func guessed(for payload: JSONObject) -> DateField {
            payload["receiptType"] == nil ? .signedDate : .receiptCreationDate
        }
    }

    /// The instant this JWS is verified at (see `DateField`), in milliseconds since the epoch
    /// (Xcode writes fractions, which are dropped). `nil` when the field is absent; a value
    /// that is not a usable number is malformed.
    public func effectiveDate(_ dateField: DateField) throws(VerificationError) -> Timestamp? {
        let field = dateField.rawValue
        guard let value = payload[field], !value.isNull else { return nil }
        guard let milliseconds = value.doubleValue, milliseconds.isFinite,
              abs(milliseconds) < 1e15  // about 31,000 years: anything beyond is not a date
        else { throw .malformed(.notNotification, "the payload's \(field) is not a number of milliseconds") }
        return Timestamp(milliseconds: Int64(milliseconds.rounded(.down)))
    }

    /// The payload's own environment (`signedEnvironmentName`), when it names a known one.
    public var payloadEnvironment: AppStoreEnvironment? {
        payload.signedEnvironmentName.flatMap(AppStoreEnvironment.init(appleName:))
    }
}

extension JSONObject {
    /// A signed payload's own environment, as Apple names it: `environment` (transactions,
    /// renewal info), or `receiptType` (app transactions).
    var signedEnvironmentName: String? { self["environment"]?.stringValue ?? self["receiptType"]?.stringValue }
}
