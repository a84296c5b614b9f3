import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore

/// A freshly issued dev chain (root → intermediate → leaf) and the leaf's key, built with
/// OpenSSL's X509 API, with the extensions Apple's own App Store chain carries.
struct IssuedChain {
    /// Apple's receipt-signing leaf marker (what the verifier looks for on `x5c[0]`).
    static let leafMarkerOID = "1.2.840.113635.100.6.11.1"
    /// Apple's Worldwide Developer Relations intermediate marker (on `x5c[1]`).
    static let intermediateMarkerOID = "1.2.840.113635.100.6.2.1"

    let root: Certificate
    let intermediate: Certificate
    let leaf: Certificate
    let leafKey: P256PrivateKey
    let leafKeyPEM: String

    private static let organization: [(String, String)] = [("C", "US"), ("O", "StoreRelay Development")]
    private static let tenYearsInDays: Int64 = 3653

    /// Issues a chain valid from a day before `now` (so clock skew between the simulator and
    /// a gateway cannot make it "not yet valid") for ten years.
    static func issue(now: Timestamp) throws(SimulatorError) -> IssuedChain {
        let day: Int64 = 86_400_000
        let notBefore = Timestamp(milliseconds: now.milliseconds - day)
        let notAfter = Timestamp(milliseconds: now.milliseconds + tenYearsInDays * day)

        let rootKey = try CertificateSigningKey.generate()
        let root = try CertificateBuilder(
            subject: organization + [("OU", "StoreRelay Dev Certification Authority"), ("CN", "StoreRelay Dev Root CA")],
            key: rootKey, notBefore: notBefore, notAfter: notAfter)
        try root.addExtension("basicConstraints", "critical,CA:TRUE", issuer: nil)
        try root.addExtension("keyUsage", "critical,keyCertSign,cRLSign", issuer: nil)
        try root.addExtension("subjectKeyIdentifier", "hash", issuer: nil)
        try root.sign(issuer: nil)

        let intermediateKey = try CertificateSigningKey.generate()
        let intermediate = try CertificateBuilder(
            subject: organization + [("OU", "G1"), ("CN", "StoreRelay Dev Worldwide Developer Relations CA")],
            key: intermediateKey, notBefore: notBefore, notAfter: notAfter)
        try intermediate.addExtension("basicConstraints", "critical,CA:TRUE,pathlen:0", issuer: root)
        try intermediate.addExtension("keyUsage", "critical,keyCertSign,cRLSign", issuer: root)
        try intermediate.addExtension("subjectKeyIdentifier", "hash", issuer: root)
        try intermediate.addExtension("authorityKeyIdentifier", "keyid:always", issuer: root)
        // Apple's intermediate carries its marker as a non-critical extension whose value is
        // an ASN.1 NULL; the verifier checks only that it is present.
        try intermediate.addExtension(intermediateMarkerOID, "ASN1:NULL", issuer: root)
        try intermediate.sign(issuer: root)

        let leafKey = try CertificateSigningKey.generate()
        let leaf = try CertificateBuilder(
            subject: organization + [("OU", "StoreRelay Dev"), ("CN", "StoreRelay Dev App Store Receipt Signing")],
            key: leafKey, notBefore: notBefore, notAfter: notAfter)
        try leaf.addExtension("basicConstraints", "critical,CA:FALSE", issuer: intermediate)
        try leaf.addExtension("keyUsage", "critical,digitalSignature", issuer: intermediate)
        try leaf.addExtension("subjectKeyIdentifier", "hash", issuer: intermediate)
        try leaf.addExtension("authorityKeyIdentifier", "keyid:always", issuer: intermediate)
        try leaf.addExtension(leafMarkerOID, "ASN1:NULL", issuer: intermediate)
        try leaf.sign(issuer: intermediate)

        let keyPEM: String
        do {
            keyPEM = try leafKey.key.pemString()
        } catch {
            throw SimulatorError(.signing, "cannot export the leaf key: \(error.reason)")
        }
        return IssuedChain(
            root: try root.certificate(), intermediate: try intermediate.certificate(),
            leaf: try leaf.certificate(), leafKey: leafKey.key, leafKeyPEM: keyPEM)
    }

    func pem(_ certificate: Certificate) -> String {
        PEMText.encode(certificate.derBytes, label: "CERTIFICATE")
    }
}
