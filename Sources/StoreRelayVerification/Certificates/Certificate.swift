internal import COpenSSL
internal import CStoreRelayShims
public import StoreRelayCore
public import StoreRelayCrypto
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An X.509 certificate: the one Swift owner of an OpenSSL `X509*`, freed in `deinit`.
///
/// `@unchecked Sendable` because the object is never mutated after init and OpenSSL 3
/// allows concurrent read-only use of an `X509` (its lazily cached extension data is
/// guarded by OpenSSL's own lock).
public final class Certificate: @unchecked Sendable, CustomStringConvertible {
    let pointer: OpaquePointer
    /// The DER encoding, as parsed or as re-encoded from PEM.
    public let derBytes: [UInt8]

    /// Takes ownership of `pointer` (one reference).
    private init(taking pointer: OpaquePointer, der: [UInt8]) {
        self.pointer = pointer
        self.derBytes = der
    }

    deinit { X509_free(pointer) }

    /// Shares a borrowed (`get0`) `X509*`: takes a reference of its own.
    convenience init?(retaining borrowed: OpaquePointer) {
        guard let der = Certificate.encodeDER(borrowed), X509_up_ref(borrowed) == 1 else {
            OpenSSLErrorQueue.clear()
            return nil
        }
        self.init(taking: borrowed, der: der)
    }

    /// Parses one DER certificate; trailing bytes after it are rejected.
    public convenience init(derBytes: [UInt8]) throws(CryptoError) {
        let parsed: OpaquePointer? = derBytes.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            guard let start = buffer.baseAddress, buffer.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = start
            guard let x509 = d2i_X509(nil, &cursor, buffer.count) else { return nil }
            // d2i advances the cursor past what it read: anything left over is not ours.
            if cursor.map({ $0 - start }) != buffer.count { X509_free(x509); return nil }
            return x509
        }
        guard let parsed else { throw CryptoError.fromQueue(.invalidCertificate, "not a DER certificate") }
        self.init(taking: parsed, der: derBytes)
    }

    /// Parses the first certificate of a PEM text.
    public convenience init(pemString: String) throws(CryptoError) {
        let all = try Certificate.pemBundle(pemString)
        try self.init(derBytes: all[0].derBytes)
    }

    /// Parses every `CERTIFICATE` block of a PEM text (a bundle); at least one must be present.
    public static func pemBundle(_ pem: String) throws(CryptoError) -> [Certificate] {
        var certificates: [Certificate] = []
        var failure: CryptoError?
        Array(pem.utf8).withUnsafeBytes { raw in
            // BIO_new_mem_buf does not copy: the BIO lives only inside this closure.
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return }
            defer { BIO_free(bio) }
            while let x509 = PEM_read_bio_X509(bio, nil, nil, nil) {
                guard let der = Certificate.encodeDER(x509) else {
                    X509_free(x509)
                    failure = CryptoError.fromQueue(.invalidCertificate, "cannot re-encode a PEM certificate")
                    return
                }
                certificates.append(Certificate(taking: x509, der: der))
            }
        }
        if let failure { throw failure }
        // The loop always ends on "no start line": an expected error, not news for the next call.
        let leftover = OpenSSLErrorQueue.drain()
        guard !certificates.isEmpty else {
            throw CryptoError(.invalidCertificate, "no PEM certificate found" + (leftover.isEmpty ? "" : ": \(leftover)"))
        }
        return certificates
    }

    private static func encodeDER(_ x509: OpaquePointer) -> [UInt8]? {
        let length = i2d_X509(x509, nil)
        guard length > 0 else { return nil }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(x509, &cursor)
        }
        return written == length ? der : nil
    }

    /// The subject in DER order, e.g. `C=US,O=Apple Inc.,OU=G6,CN=Apple Worldwide ...`.
    public var subject: String { Certificate.describe(X509_get_subject_name(pointer)) }

    /// The issuer, in the same form as `subject`.
    public var issuer: String { Certificate.describe(X509_get_issuer_name(pointer)) }

    private static func describe(_ name: OpaquePointer?) -> String {
        guard let name else { return "" }
        var parts: [String] = []
        for index in 0..<X509_NAME_entry_count(name) {
            guard let entry = X509_NAME_get_entry(name, index) else { continue }
            let nid = OBJ_obj2nid(X509_NAME_ENTRY_get_object(entry))
            let key = OBJ_nid2sn(nid).map { String(cString: $0) } ?? "?"
            var utf8: UnsafeMutablePointer<UInt8>?
            let length = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(entry))
            var value = ""
            if length >= 0, let utf8 {
                value = String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self)
                storerelay_openssl_free(utf8)
            }
            parts.append("\(key)=\(value)")
        }
        OpenSSLErrorQueue.clear()
        return parts.joined(separator: ",")
    }

    /// The serial number in lowercase hexadecimal, without leading zero bytes.
    public var serialNumberHex: String {
        guard let bn = ASN1_INTEGER_to_BN(X509_get_serialNumber(pointer), nil) else { return "" }
        defer { BN_free(bn) }
        guard let hex = BN_bn2hex(bn) else { return "" }
        defer { storerelay_openssl_free(hex) }
        return String(cString: hex).lowercased()
    }

    /// Start of the validity period.
    public var notBefore: Timestamp { Certificate.timestamp(X509_get0_notBefore(pointer)) }
    /// End of the validity period (inclusive, as RFC 5280 §4.1.2.5 defines it).
    public var notAfter: Timestamp { Certificate.timestamp(X509_get0_notAfter(pointer)) }

    private static func timestamp(_ time: UnsafePointer<ASN1_TIME>?) -> Timestamp {
        var parts = tm()
        guard let time, ASN1_TIME_to_tm(time, &parts) == 1 else {
            OpenSSLErrorQueue.clear()
            return Timestamp(milliseconds: 0)
        }
        return Timestamp(seconds: Int64(timegm(&parts)))
    }

    /// Whether the certificate carries an extension with this dotted OID, e.g. Apple's
    /// `1.2.840.113635.100.6.11.1` receipt-signing marker.
    public func hasExtension(oid: String) -> Bool {
        // no_name = 1: accept only the numerical form, never a short or long name.
        guard let object = OBJ_txt2obj(oid, 1) else {
            OpenSSLErrorQueue.clear()
            return false
        }
        defer { ASN1_OBJECT_free(object) }
        return X509_get_ext_by_OBJ(pointer, object, -1) >= 0
    }

    /// The subject public key.
    public func publicKey() throws(CryptoError) -> PublicKey {
        guard let key = X509_get_pubkey(pointer) else {
            throw CryptoError.fromQueue(.invalidKey, "the certificate's public key cannot be read")
        }
        return PublicKey(taking: key)
    }

    /// Whether both are the same certificate (same DER bytes).
    public func isSame(as other: Certificate) -> Bool { derBytes == other.derBytes }

    public var description: String { "Certificate(\(subject), serial \(serialNumberHex))" }
}
