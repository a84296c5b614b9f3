import Foundation
import Testing
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// RS256 on OpenSSL's EVP path: Google's push tokens and OAuth2 assertions. The reference for
/// agreement is the `openssl` command line, which shares nothing with our key building.
@Suite struct RSATests {
    static let key = try! RSAPrivateKey.generate()

    @Test func signsAndVerifiesAndRefusesEveryChange() throws {
        let message = Array("eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0".utf8)
        let signature = try Self.key.signRS256(message)
        let publicKey = try Self.key.publicKey()
        #expect(signature.count == 256)
        #expect(publicKey.bits == 2048)
        #expect(publicKey.isValidRS256Signature(signature, for: message))
        var otherMessage = message
        otherMessage[3] ^= 1
        #expect(!publicKey.isValidRS256Signature(signature, for: otherMessage))
        for index in [0, 100, 255] {
            var flipped = signature
            flipped[index] ^= 0x80
            #expect(!publicKey.isValidRS256Signature(flipped, for: message))
        }
        #expect(!publicKey.isValidRS256Signature(Array(signature.dropLast()), for: message))
        #expect(!publicKey.isValidRS256Signature(signature + [0], for: message))
        #expect(!publicKey.isValidRS256Signature([], for: message))
        #expect(!publicKey.isValidRS256Signature([UInt8](repeating: 0, count: 256), for: message))
        #expect(!publicKey.isValidRS256Signature([UInt8](repeating: 0xFF, count: 256), for: message))
        // Another key's signature of the same message.
        let other = try RSAPrivateKey.generate()
        #expect(!publicKey.isValidRS256Signature(try other.signRS256(message), for: message))
    }

    @Test func componentsRoundTripThroughAJWKShape() throws {
        let publicKey = try Self.key.publicKey()
        let (modulus, exponent) = try publicKey.components()
        #expect(modulus.count == 256)
        #expect(exponent == [0x01, 0x00, 0x01])
        // Leading zero bytes (some encoders keep a sign byte) change nothing.
        let rebuilt = try RSAPublicKey(modulus: [0] + modulus, exponent: [0] + exponent)
        let message = Array("payload".utf8)
        #expect(rebuilt.isValidRS256Signature(try Self.key.signRS256(message), for: message))
    }

    @Test func refusesWeakOrMalformedKeys() throws {
        let (modulus, _) = try Self.key.publicKey().components()
        let refusals: [(String, [UInt8], [UInt8])] = [
            ("empty modulus", [], [1, 0, 1]),
            ("1024-bit modulus", Array(modulus.prefix(128)), [1, 0, 1]),
            ("modulus over 8192 bits", [0xFF] + [UInt8](repeating: 0xAB, count: 1024), [1, 0, 1]),
            ("even exponent", modulus, [1, 0, 0]),
            ("exponent 1", modulus, [1]),
            ("empty exponent", modulus, []),
            ("exponent wider than 64 bits", modulus, [UInt8](repeating: 1, count: 9)),
        ]
        for (name, n, e) in refusals {
            #expect(throws: CryptoError.self, "\(name)") { try RSAPublicKey(modulus: n, exponent: e) }
        }
        #expect(throws: CryptoError.self) { try RSAPrivateKey(pemString: "not a key") }
        let ecKey = try P256PrivateKey.generate().pemString()
        let error = #expect(throws: CryptoError.self) { try RSAPrivateKey(pemString: ecKey) }
        #expect(error?.code == .unsupportedKey)
    }

    @Test(.enabled(if: CommandRunner.isAvailable("openssl"), "openssl is not installed"))
    func agreesWithTheOpenSSLCommandLine() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rsa-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let keyFile = directory.appendingPathComponent("key.pem"), messageFile = directory.appendingPathComponent("m")
        let message = Array("header.claims".utf8)
        try Data(message).write(to: messageFile)

        // A key openssl generated, in PKCS#1 and PKCS#8: our signature verifies with openssl.
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:3072",
                                          "-out", keyFile.path], check: true)
        let pkcs8 = try String(contentsOf: keyFile, encoding: .utf8)
        let pkcs1 = try CommandRunner.run("openssl", ["rsa", "-in", keyFile.path, "-traditional"], check: true).stdout
        #expect(pkcs1.contains("BEGIN RSA PRIVATE KEY"))
        let publicFile = directory.appendingPathComponent("pub.pem")
        try CommandRunner.run("openssl", ["pkey", "-in", keyFile.path, "-pubout", "-out", publicFile.path], check: true)
        let signatureFile = directory.appendingPathComponent("sig")
        for pem in [pkcs8, pkcs1] {
            try Data(try RSAPrivateKey(pemString: pem).signRS256(message)).write(to: signatureFile)
            let verified = try CommandRunner.run("openssl", ["dgst", "-sha256", "-verify", publicFile.path,
                                                              "-signature", signatureFile.path, messageFile.path])
            #expect(verified.status == 0, "\(verified.stderr)")
        }
        let ours = try RSAPrivateKey(pemString: pkcs8)

        // openssl's signature verifies with our key built from the modulus and exponent.
        try CommandRunner.run("openssl", ["dgst", "-sha256", "-sign", keyFile.path, "-out", signatureFile.path,
                                          messageFile.path], check: true)
        let theirs = Array(try Data(contentsOf: signatureFile))
        let (n, e) = try ours.publicKey().components()
        let rebuilt = try RSAPublicKey(modulus: n, exponent: e)
        #expect(rebuilt.bits == 3072)
        #expect(rebuilt.isValidRS256Signature(theirs, for: message))
        #expect(!rebuilt.isValidRS256Signature(theirs, for: message + [0]))
    }
}
