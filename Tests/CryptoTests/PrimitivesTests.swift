import Testing
import StoreRelayTestSupport
import StoreRelayCrypto
import StoreRelayCore

@Suite struct PrimitivesTests {
    /// FIPS 180-4 examples, and a state copied after a prefix continuing as the whole would.
    @Test func sha256MatchesTheStandardAndContinuesFromACopiedState() {
        #expect(SHA256.hexHash([]) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SHA256.hexHash(Array("abc".utf8)) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        let twoBlocks = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
        #expect(SHA256.hexHash(twoBlocks) == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")

        var random = SeededGenerator(seed: 256)
        let message = (0..<5_000).map { _ in UInt8.random(in: 0...255, using: &random) }
        for split in [0, 1, 55, 56, 63, 64, 65, 127, 128, 4_999, 5_000] {
            var prefix = SHA256.State()
            prefix.update(Array(message[..<split]))
            let early = prefix.digest()
            var continued = prefix  // a copy: the prefix is hashed once, continued twice
            continued.update(Array(message[split...]))
            #expect(continued.digest() == SHA256.hash(message), "split at \(split)")
            #expect(prefix.digest() == early, "digest() must not spend the state")
            #expect(early == SHA256.hash(Array(message[..<split])))
        }
    }

    /// RFC 4231 §4.2 and §4.3.
    @Test func hmacSHA256MatchesRFC4231() {
        let case1 = HMACSHA256.authenticationCode(for: Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20))
        #expect(SHA256.hex(case1) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let case2 = HMACSHA256.authenticationCode(for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8))
        #expect(SHA256.hex(case2) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        #expect(HMACSHA256.isValid(case2, for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
        #expect(!HMACSHA256.isValid(case1, for: Array("what do ya want for nothing?".utf8), key: Array("Jefe".utf8)))
        #expect(HMACSHA256.authenticationCode(for: [], key: []).count == 32)
    }

    @Test func randomBytesDiffer() {
        let a = SecureRandom.bytes(32), b = SecureRandom.bytes(32)
        #expect(a.count == 32 && b.count == 32 && a != b)
        #expect(SecureRandom.bytes(0).isEmpty)
        #expect(SecureRandom.hexToken(16).count == 32)
    }

    @Test func constantTimeEquality() {
        #expect(ConstantTime.equals([1, 2, 3], [1, 2, 3]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2, 4]))
        #expect(!ConstantTime.equals([1, 2, 3], [1, 2]))
        #expect(!ConstantTime.equals([1, 2], [1, 2, 3]))
        #expect(!ConstantTime.equals([], [0]))
        #expect(ConstantTime.equals([UInt8](), []))
        #expect(ConstantTime.equals("secret", "secret"))
        #expect(!ConstantTime.equals("secret", "Secret"))
    }

    /// RFC 4648 §10 vectors, plus the strictness JWS relies on.
    @Test func base64IsStrict() {
        let vectors = ["": "", "f": "Zg==", "fo": "Zm8=", "foo": "Zm9v", "foob": "Zm9vYg==", "fooba": "Zm9vYmE=", "foobar": "Zm9vYmFy"]
        for (plain, encoded) in vectors {
            #expect(Base64.encode(Array(plain.utf8)) == encoded)
            #expect(Base64.decode(encoded) == Array(plain.utf8))
            let url = encoded.replacingOccurrences(of: "=", with: "")
            #expect(Base64.urlEncode(Array(plain.utf8)) == url)
            #expect(Base64.urlDecode(url) == Array(plain.utf8))
        }
        #expect(Base64.urlEncode([0xfb, 0xff]) == "-_8")
        #expect(Base64.encode([0xfb, 0xff]) == "+/8=")
        #expect(Base64.urlDecode("-_8") == [0xfb, 0xff])
        #expect(Base64.urlDecode("+/8") == nil)       // standard alphabet in base64url
        #expect(Base64.decode("-_8=") == nil)         // url alphabet in standard
        #expect(Base64.urlDecode("Zg==") == nil)      // padding in JWS
        #expect(Base64.decode("Zg") == nil)           // missing padding
        #expect(Base64.decode("Zg=") == nil)
        #expect(Base64.decode("Z===") == nil)
        #expect(Base64.decode("Zm9v\n") == nil)       // whitespace
        #expect(Base64.urlDecode("Zh") == nil)        // non-zero pad bits
        #expect(Base64.decode("Zh==") == nil)
        #expect(Base64.urlDecode("Z") == nil)         // impossible length
        #expect(Base64.decode("Zm=v") == nil)         // padding in the middle
        #expect(Base64.urlDecode("Zm9v\u{00e9}") == nil)
    }
}
