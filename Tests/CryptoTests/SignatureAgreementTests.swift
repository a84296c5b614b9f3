import COpenSSL
import Foundation
import Testing
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// `PublicKey.isValidES256Signature` must give exactly the verdict of OpenSSL's one-shot
/// `EVP_DigestVerify` on every signature, good or bad. What sits between the two is ours: the
/// raw `R‖S` → DER conversion, the digest computed as the JWS is decoded, the pooled verify
/// contexts, the error-queue handling. The reference here shares none of it: a fresh context
/// per check, the message hashed by OpenSSL, DER encoded by `Fixtures.derSignature`.
@Suite struct SignatureAgreementTests {
    /// The order n and the field prime p of P-256, big-endian.
    static let order = Fixtures.bytes(hex: "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")
    static let prime = Fixtures.bytes(hex: "FFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF")

    /// a + b and a − b for 32-byte big-endian numbers, modulo 2^256.
    static func add(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32), carry = 0
        for index in (0..<32).reversed() {
            let sum = Int(a[index]) + Int(b[index]) + carry
            result[index] = UInt8(sum & 0xFF)
            carry = sum >> 8
        }
        return result
    }

    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32), borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(a[index]) - Int(b[index]) - borrow
            result[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return result
    }

    static func small(_ value: UInt8) -> [UInt8] { [UInt8](repeating: 0, count: 31) + [value] }

    /// The values at the edges of ECDSA's range checks, for r and for s.
    static let edgeValues: [(name: String, bytes: [UInt8])] = [
        ("0", small(0)), ("1", small(1)), ("n-1", subtract(order, small(1))), ("n", order),
        ("n+1", add(order, small(1))), ("p-1", subtract(prime, small(1))), ("p", prime),
        ("2^256-1", [UInt8](repeating: 0xFF, count: 32)),
    ]

    /// An `EVP_PKEY` for the same public key as `key`, parsed by OpenSSL from its PEM.
    static func referenceKey(_ key: PublicKey) throws -> OpaquePointer {
        let pem = Array(try key.pemString().utf8)
        return try #require(pem.withUnsafeBytes { raw -> OpaquePointer? in
            guard let bio = BIO_new_mem_buf(raw.baseAddress, Int32(raw.count)) else { return nil }
            defer { BIO_free(bio) }
            return PEM_read_bio_PUBKEY(bio, nil, nil, nil)
        })
    }

    /// An `EVP_PKEY` for an uncompressed P-256 point: a SubjectPublicKeyInfo is a fixed
    /// prefix, then the point.
    static func referenceKey(encodedPoint: [UInt8]) throws -> OpaquePointer {
        let spki = Fixtures.bytes(hex: "3059301306072A8648CE3D020106082A8648CE3D030107034200") + encodedPoint
        return try #require(spki.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        })
    }

    static func pem(of key: OpaquePointer) throws -> String {
        let bio = try #require(BIO_new(BIO_s_mem()))
        defer { BIO_free(bio) }
        try #require(PEM_write_bio_PUBKEY(bio, key) == 1)
        var out: [UInt8] = [], chunk = [UInt8](repeating: 0, count: 512)
        while case let n = BIO_read(bio, &chunk, Int32(chunk.count)), n > 0 { out += chunk[0..<Int(n)] }
        return String(decoding: out, as: UTF8.self)
    }

    /// OpenSSL's verdict on raw `R‖S` over `message`: `EVP_DigestVerify` with SHA-256.
    static func verdictOfOpenSSL(_ key: OpaquePointer, _ message: [UInt8], _ signature: [UInt8]) throws -> Bool {
        let context = try #require(EVP_MD_CTX_new())
        defer { EVP_MD_CTX_free(context); ERR_clear_error() }
        try #require(EVP_DigestVerifyInit_ex(context, nil, "SHA256", nil, nil, key, nil) == 1)
        let der = Fixtures.derSignature(raw: signature)
        return EVP_DigestVerify(context, der, der.count, message, message.count) == 1
    }

    /// OpenSSL's verdict on raw `R‖S` over a given digest: `EVP_PKEY_verify`, for the
    /// signatures built from a chosen digest that no message is known to hash to.
    static func verdictOfOpenSSL(_ key: OpaquePointer, digest: [UInt8], _ signature: [UInt8]) throws -> Bool {
        let context = try #require(EVP_PKEY_CTX_new(key, nil))
        defer { EVP_PKEY_CTX_free(context); ERR_clear_error() }
        try #require(EVP_PKEY_verify_init(context) == 1)
        let der = Fixtures.derSignature(raw: signature)
        return EVP_PKEY_verify(context, der, der.count, digest, 32) == 1
    }

    /// Random keys and messages; each good signature mangled in every way that matters to
    /// ECDSA's range checks, including r and s at every edge value and the "wrap" forgeries
    /// r + n and r + (p − n) that a verifier comparing x(R) without reducing it would take.
    @Test func givesOpenSSLsVerdictOnRandomKeysAndEdgeValues() throws {
        var random = SeededGenerator(seed: 0x5EC1)
        var checked = 0, valid = 0
        for _ in 0..<6 {
            let signer = try P256PrivateKey.generate()
            let key = try signer.publicKey()
            let reference = try Self.referenceKey(key)
            defer { EVP_PKEY_free(reference) }
            let stranger = try P256PrivateKey.generate().publicKey()
            for round in 0..<24 {
                let message = (0..<(round * 41)).map { _ in UInt8.random(in: 0...255, using: &random) }
                let signature = try signer.signES256(message)
                let r = Array(signature[0..<32]), s = Array(signature[32..<64])
                var flippedR = signature, flippedS = signature, otherMessage = message + [0]
                flippedR[Int.random(in: 0..<32, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                flippedS[Int.random(in: 32..<64, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                otherMessage[Int.random(in: 0..<otherMessage.count, using: &random)] ^= 0x80
                let pMinusN = Self.subtract(Self.prime, Self.order)
                var candidates: [(signature: [UInt8], message: [UInt8], expected: Bool?)] = [
                    (signature, message, true),
                    // (r, n − s) is the same signature's twin; ECDSA (and OpenSSL) accept it.
                    (r + Self.subtract(Self.order, s), message, true),
                    (signature, otherMessage, false),
                    (flippedR, message, false),
                    (flippedS, message, false),
                    (Self.add(r, Self.order) + s, message, false),
                    (Self.add(r, pMinusN) + s, message, false),
                    (Self.subtract(r, Self.order) + s, message, false),
                    (s + r, message, nil),
                ]
                for (name, edge) in Self.edgeValues {
                    let rangeOK = name == "1" || name == "n-1"
                    candidates.append((edge + s, message, rangeOK ? nil : false))
                    candidates.append((r + edge, message, rangeOK ? nil : false))
                }
                for (index, (candidate, candidateMessage, expected)) in candidates.enumerated() {
                    let ours = key.isValidES256Signature(candidate, for: candidateMessage)
                    let openssl = try Self.verdictOfOpenSSL(reference, candidateMessage, candidate)
                    #expect(ours == openssl, "round \(round), case \(index)")
                    if let expected { #expect(ours == expected, "round \(round), case \(index)") }
                    #expect(!stranger.isValidES256Signature(candidate, for: candidateMessage), "round \(round), case \(index)")
                    checked += 1
                    if ours { valid += 1 }
                }
            }
        }
        #expect(checked == 6 * 24 * (9 + 2 * Self.edgeValues.count))
        #expect(valid >= 6 * 24 * 2)
    }

    /// Signatures made by hand from a known private key d, to reach what no honest signature
    /// does: R at infinity (e = −r·d, so u1·G + u2·Q = 0) and u1·G = u2·Q (e = r·d,
    /// s = 2rd/k, so the sum is a doubling), given as digests.
    @Test func givesOpenSSLsVerdictWhereThePointSumDegenerates() throws {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        let context = try #require(BN_CTX_new())
        let n = try #require(BN_dup(EC_GROUP_get0_order(group)))
        defer { EC_GROUP_free(group); BN_CTX_free(context); BN_free(n) }
        func number() throws -> OpaquePointer { try #require(BN_new()) }
        let d = try number(), k = try number(), kInverse = try number(), x = try number(), r = try number()
        let s = try number(), e = try number(), t = try number(), minusRD = try number(), twice = try number()
        defer { for value in [d, k, kInverse, x, r, s, e, t, minusRD, twice] { BN_free(value) } }
        func bytes(_ value: OpaquePointer) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            BN_bn2binpad(value, &out, 32)
            return out
        }
        for round in 0..<8 {
            BN_rand_range(d, n)
            let q = try #require(EC_POINT_new(group)), kG = try #require(EC_POINT_new(group))
            defer { EC_POINT_free(q); EC_POINT_free(kG) }
            EC_POINT_mul(group, q, d, nil, nil, context)
            var encoded = [UInt8](repeating: 0, count: 65)
            EC_POINT_point2oct(group, q, POINT_CONVERSION_UNCOMPRESSED, &encoded, 65, context)
            let reference = try Self.referenceKey(encodedPoint: encoded)
            defer { EVP_PKEY_free(reference) }
            let key = try PublicKey(pemString: Self.pem(of: reference))
            for _ in 0..<10 {
                BN_rand_range(k, n)
                EC_POINT_mul(group, kG, k, nil, nil, context)
                EC_POINT_get_affine_coordinates(group, kG, x, nil, context)
                BN_nnmod(r, x, n, context)
                BN_mod_inverse(kInverse, k, n, context)
                BN_rand(e, 256, -1, 0)
                BN_mod_mul(t, r, d, n, context)
                BN_mod_add(s, t, e, n, context)  // honest: s = k⁻¹(e + r·d)
                BN_mod_mul(s, s, kInverse, n, context)
                BN_sub(minusRD, n, t)
                BN_mod_add(twice, t, t, n, context)
                BN_mod_mul(twice, twice, kInverse, n, context)

                let cases: [(name: String, digest: [UInt8], signature: [UInt8], valid: Bool)] = [
                    ("honest", bytes(e), bytes(r) + bytes(s), true),
                    ("infinity", bytes(minusRD), bytes(r) + bytes(s), false),
                    ("doubling", bytes(t), bytes(r) + bytes(twice), true),
                ]
                for (name, digest, signature, valid) in cases {
                    #expect(key.isValidES256Signature(signature, digest: digest) == valid, "round \(round): \(name)")
                    #expect(try Self.verdictOfOpenSSL(reference, digest: digest, signature) == valid, "round \(round): \(name)")
                }
            }
        }
    }

    /// The case no random signature reaches (odds 2⁻¹²⁸): x(R) in [n, p), so r = x(R) − n.
    /// Built from the equation: with the key Q = R itself, a zero digest and s = r, u1 = 0
    /// and u2 = 1, so R = u2·Q and (r, r) is valid, while (x(R), r) is out of range.
    @Test func acceptsSignaturesWhoseRIsReducedModuloTheOrder() throws {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        let context = try #require(BN_CTX_new()), x = try #require(BN_bin2bn(Self.order, 32, nil))
        let point = try #require(EC_POINT_new(group))
        defer { EC_GROUP_free(group); BN_CTX_free(context); BN_free(x); EC_POINT_free(point) }
        while EC_POINT_set_compressed_coordinates(group, point, x, 0, context) != 1 {
            BN_add_word(x, 1)
        }
        ERR_clear_error()
        var encoded = [UInt8](repeating: 0, count: 65)
        try #require(EC_POINT_point2oct(group, point, POINT_CONVERSION_UNCOMPRESSED, &encoded, 65, context) == 65)
        var xBytes = [UInt8](repeating: 0, count: 32)
        BN_bn2binpad(x, &xBytes, 32)
        let r = Self.subtract(xBytes, Self.order)

        let reference = try Self.referenceKey(encodedPoint: encoded)
        defer { EVP_PKEY_free(reference) }
        let key = try PublicKey(pemString: Self.pem(of: reference))
        let zeroDigest = [UInt8](repeating: 0, count: 32)
        var otherR = r
        otherR[31] ^= 1
        for (signature, valid) in [(r + r, true), (otherR + r, false), (xBytes + r, false)] {
            #expect(key.isValidES256Signature(signature, digest: zeroDigest) == valid)
            #expect(try Self.verdictOfOpenSSL(reference, digest: zeroDigest, signature) == valid)
        }
    }

    /// Apple's own keys, from every real notification and signed datum: each signature
    /// verifies, the tampered ones do not, and OpenSSL agrees on each.
    @Test(.enabled(if: Vectors.available, Comment(rawValue: Vectors.skipMessage)))
    func givesOpenSSLsVerdictOnApplesRealSignatures() throws {
        let files = Vectors.files(in: "real/v2-notifications") + Vectors.files(in: "real/signed-data")
            + Vectors.files(in: "negative")
        try #require(!files.isEmpty, "no vectors in \(TestPaths.vectors?.path ?? "")")
        for file in files {
            let jws = try #require(Vectors.text(file)).trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = jws.split(separator: ".")
            try #require(parts.count == 3, "\(file)")
            let header = String(decoding: try #require(Base64.urlDecode(parts[0])), as: UTF8.self)
            let leafText = try #require(header.components(separatedBy: #""x5c":[""#).last?.split(separator: "\"").first)
            let key = try Certificate(derBytes: try #require(Base64.decode(leafText))).publicKey()
            let reference = try Self.referenceKey(key)
            defer { EVP_PKEY_free(reference) }
            let input = Array((parts[0] + "." + parts[1]).utf8)
            let signature = try #require(Base64.urlDecode(parts[2]))
            let expected = !file.hasPrefix("negative/")
            #expect(key.isValidES256Signature(signature, for: input) == expected, "\(file)")
            #expect(try Self.verdictOfOpenSSL(reference, input, signature) == expected, "\(file)")
        }
    }
}
