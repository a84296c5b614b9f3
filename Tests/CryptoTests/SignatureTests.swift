import Foundation
import Testing
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct SignatureTests {
    let authority = Fixtures.authority

    /// Splits a compact JWS into signing input and raw signature.
    func parts(_ jws: String) throws -> (input: [UInt8], signature: [UInt8]) {
        let segments = jws.split(separator: ".")
        return (Array((segments[0] + "." + segments[1]).utf8), try #require(Base64.urlDecode(segments[2])))
    }

    @Test func verifiesSignaturesMadeByTheOpenSSLCommandLine() throws {
        let jws = try authority.signJWS(payload: #"{"hello":"world"}"#)
        let (input, signature) = try parts(jws)
        let key = try Certificate(derBytes: authority.chain(.valid).certificatesDER[0]).publicKey()
        #expect(key.isP256)
        #expect(key.isValidES256Signature(signature, for: input))

        var wrongMessage = input
        wrongMessage[wrongMessage.count - 1] ^= 1
        #expect(!key.isValidES256Signature(signature, for: wrongMessage))
        var flipped = signature
        flipped[10] ^= 0x40
        #expect(!key.isValidES256Signature(flipped, for: input))
        #expect(!key.isValidES256Signature(Array(signature.prefix(63)), for: input))
        #expect(!key.isValidES256Signature(signature + [0], for: input))
        #expect(!key.isValidES256Signature([UInt8](repeating: 0, count: 64), for: input))
        #expect(!key.isValidES256Signature([UInt8](repeating: 0xFF, count: 64), for: input))
        let otherKey = try Certificate(derBytes: authority.chain(.unknownRoot).certificatesDER[0]).publicKey()
        #expect(!otherKey.isValidES256Signature(signature, for: input))
        // After all those expected failures the key still verifies: no stale error state.
        #expect(key.isValidES256Signature(signature, for: input))
    }

    /// One key checked from several threads at once, good and bad signatures interleaved:
    /// the key's pooled verify contexts must never be shared, and a failed check must not
    /// spoil a context for the next one.
    @Test func oneKeyVerifiesFromManyThreadsAtOnce() throws {
        let jws = try authority.signJWS(payload: #"{"threads":4}"#)
        let (input, signature) = try parts(jws)
        let key = try Certificate(derBytes: authority.chain(.valid).certificatesDER[0]).publicKey()
        var flipped = signature
        flipped[7] ^= 0x01
        let cases: [(signature: [UInt8], valid: Bool)] = [
            (signature, true), (flipped, false), ([UInt8](repeating: 0xFF, count: 64), false), (signature, true),
        ]
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<150 {
                let (candidate, valid) = cases[(round + thread) % cases.count]
                if key.isValidES256Signature(candidate, for: input) != valid {
                    mismatches.withLock { $0 += 1 }
                }
            }
        }
        #expect(mismatches.current == 0)
        #expect(key.isValidES256Signature(signature, for: input))
    }

    @Test func signsWhatTheOpenSSLCommandLineVerifies() throws {
        let key = try P256PrivateKey.generate()
        let message = Array("StoreRelay simulate".utf8)
        let raw = try key.signES256(message)
        #expect(raw.count == 64)
        #expect(try key.publicKey().isValidES256Signature(raw, for: message))

        // Cross-check with the CLI: DER-encode R and S here, independently of the library.
        let der = Fixtures.derSignature(raw: raw)
        let directory = authority.directory
        try key.publicKey().pemString().write(toFile: directory + "/sim.pub", atomically: true, encoding: .utf8)
        try Data(der).write(to: URL(fileURLWithPath: directory + "/sim.sig"))
        let result = try CommandRunner.run("openssl", ["dgst", "-sha256", "-verify", "sim.pub", "-signature", "sim.sig"],
                                           stdin: message, directory: URL(fileURLWithPath: directory))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.contains("Verified OK"))
    }

    @Test func loadsPEMKeysAndRoundTrips() throws {
        let pem = try String(contentsOfFile: authority.chain(.valid).leafKeyPath, encoding: .utf8)
        let key = try P256PrivateKey(pemString: pem)
        let certificateKey = try Certificate(derBytes: authority.chain(.valid).certificatesDER[0]).publicKey()
        let message = Array("x".utf8)
        #expect(certificateKey.isValidES256Signature(try key.signES256(message), for: message))

        let reloaded = try P256PrivateKey(pemString: key.pemString())
        #expect(try key.publicKey().pemString() == reloaded.publicKey().pemString())
        #expect(try PublicKey(pemString: key.publicKey().pemString()).isP256)
        let error = #expect(throws: CryptoError.self) { try P256PrivateKey(pemString: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n") }
        #expect(error?.code == .invalidKey)
    }

    @Test func rejectsNonP256PrivateKeys() throws {
        let directory = authority.directory
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-384", "-out", "p384.key"],
                              directory: URL(fileURLWithPath: directory), check: true)
        let pem = try String(contentsOfFile: directory + "/p384.key", encoding: .utf8)
        let error = #expect(throws: CryptoError.self) { try P256PrivateKey(pemString: pem) }
        #expect(error?.code == .unsupportedKey)
    }
}
