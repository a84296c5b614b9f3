import Testing
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct ChainVerifierTests {
    let authority = Fixtures.authority

    func certificates(_ variant: TestCertificateAuthority.Variant) throws -> [Certificate] {
        try authority.chain(variant).certificatesDER.map { try Certificate(derBytes: $0) }
    }

    func verifier() throws -> CertificateChainVerifier {
        try CertificateChainVerifier(trustedRoots: [Certificate(pemString: authority.rootPEM)])
    }

    @Test func acceptsAValidChainAndReportsItsWindow() throws {
        let chain = try certificates(.valid)
        let verified = try verifier().verify(leaf: chain[0], intermediates: [chain[1]], at: .now())
        #expect(verified.certificates.count == 3)
        #expect(verified.certificates[2].subject == (try Certificate(pemString: authority.rootPEM)).subject)
        #expect(verified.isValid(at: .now()))
        #expect(verified.validUntil == chain.map(\.notAfter).min())
        #expect(!verified.isValid(at: Timestamp(seconds: verified.validUntil.seconds + 1)))
    }

    @Test func rejectsExpiredAndNotYetValid() throws {
        let chain = try certificates(.expiredLeaf)
        let expired = #expect(throws: CryptoError.self) {
            try verifier().verify(leaf: chain[0], intermediates: [chain[1]], at: .now())
        }
        #expect(expired?.code == .certificateExpired)
        #expect(expired?.reason.contains("expired") == true)
        let valid = try certificates(.valid)
        let early = #expect(throws: CryptoError.self) {
            try verifier().verify(leaf: valid[0], intermediates: [valid[1]], at: Timestamp(seconds: 946_684_800))
        }
        #expect(early?.code == .certificateNotYetValid)
        // Inside the leaf's own validity (2020) the root did not exist yet: every certificate
        // of the chain is checked at the validation time, not only the leaf.
        let rootTooYoung = #expect(throws: CryptoError.self) {
            try verifier().verify(leaf: chain[0], intermediates: [chain[1]], at: Timestamp(seconds: 1_590_000_000 + 86_400 * 30))
        }
        #expect(rootTooYoung?.code == .certificateNotYetValid)
        #expect(rootTooYoung?.reason.contains("depth 2") == true)
    }

    @Test func neverTrustsTheSentRoot() throws {
        let unknown = try certificates(.unknownRoot)
        let error = #expect(throws: CryptoError.self) {
            // Even passing the unknown root itself as an intermediate does not make it trusted.
            try verifier().verify(leaf: unknown[0], intermediates: [unknown[1], unknown[2]], at: .now())
        }
        #expect(error?.code == .untrustedChain)
        #expect(error?.reason.contains("depth") == true)

        let valid = try certificates(.valid)
        let wrongIntermediate = #expect(throws: CryptoError.self) {
            try verifier().verify(leaf: valid[0], intermediates: [unknown[1]], at: .now())
        }
        #expect(wrongIntermediate?.code == .untrustedChain)
        let noRoots = try CertificateChainVerifier(trustedRoots: [])
        #expect(throws: CryptoError.self) { try noRoots.verify(leaf: valid[0], intermediates: [valid[1]], at: .now()) }
    }

    @Test func insistsOnTheGivenIntermediate() throws {
        // The leaf sits directly under the trusted root: a path exists, but not through the
        // intermediate the caller named, which is what x5c requires.
        let valid = try certificates(.valid)
        let unknown = try certificates(.unknownRoot)
        let trustingIntermediate = try CertificateChainVerifier(trustedRoots: [valid[1]])
        #expect(throws: CryptoError.self) {
            try trustingIntermediate.verify(leaf: valid[0], intermediates: [unknown[1]], at: .now())
        }
    }
}
