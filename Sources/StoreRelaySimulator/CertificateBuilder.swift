internal import COpenSSL
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore

/// Builds one X.509 v3 certificate with OpenSSL's X509 API: the one Swift owner of an
/// `X509*`, freed in `deinit`. Once signed, it stays the issuer for the next certificate
/// (OpenSSL reads the issuer's name and key identifier from it).
final class CertificateBuilder {
    private let pointer: OpaquePointer
    private let subjectKey: CertificateSigningKey

    /// A certificate for `subjectKey` named `subject` (attribute, value pairs in DER order),
    /// valid from `notBefore` to `notAfter`, with a random positive 128-bit serial.
    init(
        subject: [(String, String)], key subjectKey: CertificateSigningKey,
        notBefore: Timestamp, notAfter: Timestamp
    ) throws(SimulatorError) {
        guard let x509 = X509_new() else { throw OpenSSLErrors.failure("X509_new failed") }
        pointer = x509
        self.subjectKey = subjectKey
        // Version field 2 means X.509 v3, the version that has extensions.
        guard X509_set_version(x509, 2) == 1 else { throw OpenSSLErrors.failure("cannot set the certificate version") }
        try setSerial()
        guard ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.seconds)) != nil,
              ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.seconds)) != nil
        else { throw OpenSSLErrors.failure("cannot set the validity period") }
        guard let name = X509_NAME_new() else { throw OpenSSLErrors.failure("X509_NAME_new failed") }
        defer { X509_NAME_free(name) }
        for (field, value) in subject {
            let bytes = Array(value.utf8)
            guard X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, bytes, Int32(bytes.count), -1, 0) == 1 else {
                throw OpenSSLErrors.failure("cannot add \(field)=\(value) to the subject")
            }
        }
        // set_subject_name copies the name.
        guard X509_set_subject_name(x509, name) == 1,
              X509_set_pubkey(x509, subjectKey.pointer) == 1
        else { throw OpenSSLErrors.failure("cannot set the subject and its key") }
    }

    deinit { X509_free(pointer) }

    /// RFC 5280 §4.1.2.2: positive, at most 20 octets; 16 random bytes with the top bit
    /// cleared (positive) and the next one set (no leading zero byte to strip).
    private func setSerial() throws(SimulatorError) {
        var bytes = SecureRandom.bytes(16)
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        guard let number = BN_bin2bn(bytes, Int32(bytes.count), nil) else { throw OpenSSLErrors.failure("BN_bin2bn failed") }
        defer { BN_free(number) }
        guard let serial = BN_to_ASN1_INTEGER(number, nil) else { throw OpenSSLErrors.failure("BN_to_ASN1_INTEGER failed") }
        defer { ASN1_INTEGER_free(serial) }
        // set_serialNumber copies the integer.
        guard X509_set_serialNumber(pointer, serial) == 1 else { throw OpenSSLErrors.failure("cannot set the serial number") }
    }

    /// Adds an extension written as in an OpenSSL config file (`basicConstraints`,
    /// `critical,CA:TRUE`), or an arbitrary OID with a generic value (`ASN1:NULL`).
    /// `issuer` is nil for a self-signed certificate.
    func addExtension(_ name: String, _ value: String, issuer: CertificateBuilder?) throws(SimulatorError) {
        var context = X509V3_CTX()
        // No CONF database: the zeroed context's db is NULL, what X509V3_set_ctx_nodb does.
        X509V3_set_ctx(&context, issuer?.pointer ?? pointer, pointer, nil, nil, 0)
        guard let extensionValue = X509V3_EXT_nconf(nil, &context, name, value) else {
            throw OpenSSLErrors.failure("cannot encode the extension \(name)=\(value)")
        }
        defer { X509_EXTENSION_free(extensionValue) }
        // add_ext copies the extension.
        guard X509_add_ext(pointer, extensionValue, -1) == 1 else {
            throw OpenSSLErrors.failure("cannot add the extension \(name)")
        }
    }

    /// Sets the issuer name and signs with ECDSA-SHA256 (`issuer` nil: self-signed).
    func sign(issuer: CertificateBuilder?) throws(SimulatorError) {
        let signer = issuer ?? self
        guard X509_set_issuer_name(pointer, X509_get_subject_name(signer.pointer)) == 1 else {
            throw OpenSSLErrors.failure("cannot set the issuer name")
        }
        guard X509_sign(pointer, signer.subjectKey.pointer, EVP_sha256()) > 0 else {
            throw OpenSSLErrors.failure("cannot sign the certificate")
        }
    }

    /// The signed certificate, parsed back by StoreRelayVerification so callers get the same type
    /// the verifier uses.
    func certificate() throws(SimulatorError) -> Certificate {
        let length = i2d_X509(pointer, nil)
        guard length > 0 else { throw OpenSSLErrors.failure("cannot encode the certificate") }
        var der = [UInt8](repeating: 0, count: Int(length))
        let written = der.withUnsafeMutableBufferPointer { buffer -> Int32 in
            var cursor = buffer.baseAddress
            return i2d_X509(pointer, &cursor)
        }
        guard written == length else { throw OpenSSLErrors.failure("cannot encode the certificate") }
        do {
            return try Certificate(derBytes: der)
        } catch {
            throw SimulatorError(.signing, "OpenSSL produced a certificate it cannot read back: \(error.reason)")
        }
    }
}
