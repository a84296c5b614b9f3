import Testing
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct CertificateTests {
    @Test(.enabled(if: Fixtures.vectorsDirectory != nil, "shared test vectors are absent"))
    func parsesAppleRootFromPEMAndDER() throws {
        let pem = try Fixtures.vector("AppleRootCA-G3.pem")
        let certificate = try Certificate(pemString: pem)
        #expect(certificate.subject == "CN=Apple Root CA - G3,OU=Apple Certification Authority,O=Apple Inc.,C=US")
        #expect(certificate.issuer == certificate.subject)
        #expect(certificate.serialNumberHex == "2dc5fc88d2c54b95")
        #expect(certificate.notBefore.iso8601 == "2014-04-30T18:19:06.000Z")
        #expect(certificate.notAfter.iso8601 == "2039-04-30T18:19:06.000Z")
        #expect(SHA256.hexHash(certificate.derBytes).uppercased() == "63343ABFB89A6A03EBB57E9B3F5FA7BE7C4F5C756F3017B3A8C488C3653E9179")

        let again = try Certificate(derBytes: certificate.derBytes)
        #expect(again.isSame(as: certificate))
        #expect(try !certificate.publicKey().isP256)  // G3 is P-384
    }

    @Test func readsBundlesAndRejectsGarbage() throws {
        let authority = Fixtures.authority
        let bundle = try Certificate.pemBundle(authority.rootPEM + "\n" + authority.unknownRootPEM)
        #expect(bundle.count == 2)
        #expect(bundle[0].subject.contains("StoreRelay Test Root"))
        #expect(bundle[1].subject.contains("Unknown Test Root"))

        #expect(throws: CryptoError.self) { try Certificate(pemString: "hello") }
        #expect(throws: CryptoError.self) { try Certificate(derBytes: []) }
        #expect(throws: CryptoError.self) { try Certificate(derBytes: [0x30, 0x03, 0x02, 0x01, 0x01]) }
        var trailing = bundle[0].derBytes
        trailing.append(0)
        let error = #expect(throws: CryptoError.self) { try Certificate(derBytes: trailing) }
        #expect(error?.code == .invalidCertificate)
        // An expected failure leaves no stale OpenSSL error behind: the next parse is clean.
        #expect(try Certificate(derBytes: bundle[0].derBytes).subject == bundle[0].subject)
    }

    @Test func checksAppleMarkerExtensions() throws {
        let authority = Fixtures.authority
        let valid = try authority.chain(.valid).certificatesDER.map { try Certificate(derBytes: $0) }
        #expect(valid[0].hasExtension(oid: "1.2.840.113635.100.6.11.1"))
        #expect(!valid[0].hasExtension(oid: "1.2.840.113635.100.6.2.1"))
        #expect(valid[1].hasExtension(oid: "1.2.840.113635.100.6.2.1"))
        #expect(!valid[2].hasExtension(oid: "1.2.840.113635.100.6.2.1"))
        #expect(valid[1].hasExtension(oid: "2.5.29.19"))  // basicConstraints
        #expect(!valid[0].hasExtension(oid: "not an oid"))
        #expect(!valid[0].hasExtension(oid: "basicConstraints"))  // names are not OIDs

        let noLeafOID = try Certificate(derBytes: authority.chain(.leafWithoutOID).certificatesDER[0])
        #expect(!noLeafOID.hasExtension(oid: "1.2.840.113635.100.6.11.1"))
        let noIntermediateOID = try Certificate(derBytes: authority.chain(.intermediateWithoutOID).certificatesDER[1])
        #expect(!noIntermediateOID.hasExtension(oid: "1.2.840.113635.100.6.2.1"))

        let expired = try Certificate(derBytes: authority.chain(.expiredLeaf).certificatesDER[0])
        #expect(expired.notBefore.iso8601 == "2020-01-01T00:00:00.000Z")
        #expect(expired.notAfter.iso8601 == "2021-01-01T00:00:00.000Z")
        #expect(try expired.publicKey().isP256)
    }
}
