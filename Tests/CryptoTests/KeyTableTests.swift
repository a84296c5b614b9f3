import COpenSSL
import CStoreRelayShims
import Foundation
import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// The precomputed key table (`P256KeyTable`) must give exactly OpenSSL's verdict on every
/// signature, good or bad: it replaces `EVP_PKEY_verify` for nearly every check the gateway
/// makes. Each test compares the two paths on the same key.
@Suite struct KeyTableTests {
    /// The order n of P-256, big-endian.
    static let order = Fixtures.bytes(hex: "FFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551")

    /// a − b for 32-byte big-endian numbers with a ≥ b.
    static func subtract(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: 32), borrow = 0
        for index in (0..<32).reversed() {
            let difference = Int(a[index]) - Int(b[index]) - borrow
            result[index] = UInt8((difference + 256) % 256)
            borrow = difference < 0 ? 1 : 0
        }
        return result
    }

    /// The inverse mod n behind every check, against `BN_mod_inverse`: powers of two and
    /// long runs of ones (the shifts and carries), the ends of the range, and random values.
    @Test func invertsModuloTheOrderAsOpenSSLDoes() throws {
        let n = try #require(BN_bin2bn(Self.order, 32, nil)), value = try #require(BN_new())
        let expected = try #require(BN_new()), context = try #require(BN_CTX_new())
        defer { BN_free(n); BN_free(value); BN_free(expected); BN_CTX_free(context) }
        var random = SeededGenerator(seed: 0x1417)
        var values: [[UInt8]] = []
        for bit in 0..<256 {
            var power = [UInt8](repeating: 0, count: 32)  // 2^bit
            power[31 - bit / 8] = 1 << UInt8(bit % 8)
            var ones = [UInt8](repeating: 0, count: 32)  // 2^(bit+1) − 1
            for index in 0...bit { ones[31 - index / 8] |= 1 << UInt8(index % 8) }
            values += [power, ones, Self.subtract(Self.order, power)]
        }
        values += (0..<20_000).map { _ in (0..<32).map { _ in UInt8.random(in: 0...255, using: &random) } }
        var compared = 0
        for bytes in values {
            BN_bin2bn(bytes, 32, value)
            var inverse = [UInt8](repeating: 0, count: 32)
            let ok = storerelay_p256_order_inverse(&inverse, bytes)
            guard BN_is_zero(value) == 0, BN_cmp(value, n) < 0 else {
                #expect(ok == 0, "\(bytes)")
                continue
            }
            try #require(BN_mod_inverse(expected, value, n, context) != nil)
            var reference = [UInt8](repeating: 0, count: 32)
            BN_bn2binpad(expected, &reference, 32)
            #expect(ok == 1 && inverse == reference, "\(bytes)")
            compared += 1
        }
        #expect(compared > 20_000)
        var inverse = [UInt8](repeating: 0, count: 32)
        #expect(storerelay_p256_order_inverse(&inverse, [UInt8](repeating: 0, count: 32)) == 0)
        #expect(storerelay_p256_order_inverse(&inverse, Self.order) == 0)
        #expect(storerelay_p256_order_inverse(&inverse, [UInt8](repeating: 0xFF, count: 32)) == 0)
    }

    /// An `EVP_PKEY` for an uncompressed P-256 point: a SubjectPublicKeyInfo is a fixed
    /// prefix, then the point.
    static func publicKey(encodedPoint: [UInt8]) throws -> OpaquePointer {
        let spki = Fixtures.bytes(hex: "3059301306072A8648CE3D020106082A8648CE3D030107034200") + encodedPoint
        return try #require(spki.withUnsafeBufferPointer { buffer -> OpaquePointer? in
            var cursor = buffer.baseAddress
            return d2i_PUBKEY(nil, &cursor, buffer.count)
        })
    }

    /// `EVP_PKEY_verify` of raw `R‖S` over a digest: the reference every case is held to.
    static func verdictOfOpenSSL(_ key: OpaquePointer, _ digest: [UInt8], _ signature: [UInt8]) throws -> Int32 {
        let verifier = try #require(EVP_PKEY_CTX_new(key, nil))
        defer { EVP_PKEY_CTX_free(verifier); ERR_clear_error() }
        try #require(EVP_PKEY_verify_init(verifier) == 1)
        let der = Fixtures.derSignature(raw: signature)
        return EVP_PKEY_verify(verifier, der, der.count, digest, 32)
    }

    /// Signatures made by hand from a known private key d, to reach the branches of the point
    /// arithmetic no honest signature takes: R at infinity (e = −r·d, so u1·G + u2·Q = 0) and
    /// u1·G = u2·Q (e = r·d, s = 2rd/k, so the sum is a doubling). Each checked against OpenSSL.
    @Test func agreesWithOpenSSLWhereThePointSumDegenerates() throws {
        let group = try #require(EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1))
        let context = try #require(BN_CTX_new())
        let n = try #require(BN_dup(EC_GROUP_get0_order(group)))
        defer { EC_GROUP_free(group); BN_CTX_free(context); BN_free(n) }
        func number() throws -> OpaquePointer { try #require(BN_new()) }
        let d = try number(), k = try number(), kInverse = try number(), x = try number(), r = try number()
        let s = try number(), e = try number(), t = try number()
        defer { for value in [d, k, kInverse, x, r, s, e, t] { BN_free(value) } }
        func bytes(_ value: OpaquePointer) -> [UInt8] {
            var out = [UInt8](repeating: 0, count: 32)
            BN_bn2binpad(value, &out, 32)
            return out
        }
        let scratch = try #require(BN_CTX_new())
        defer { BN_CTX_free(scratch) }
        for round in 0..<8 {
            BN_rand_range(d, n)
            let q = try #require(EC_POINT_new(group)), kG = try #require(EC_POINT_new(group))
            defer { EC_POINT_free(q); EC_POINT_free(kG) }
            EC_POINT_mul(group, q, d, nil, nil, context)
            var encoded = [UInt8](repeating: 0, count: 65)
            EC_POINT_point2oct(group, q, POINT_CONVERSION_UNCOMPRESSED, &encoded, 65, context)
            let key = try Self.publicKey(encodedPoint: encoded)
            let table = try #require(storerelay_p256_key_table_new(key))
            defer { EVP_PKEY_free(key); storerelay_p256_key_table_free(table) }
            for _ in 0..<10 {
                BN_rand_range(k, n)
                EC_POINT_mul(group, kG, k, nil, nil, context)
                EC_POINT_get_affine_coordinates(group, kG, x, nil, context)
                BN_nnmod(r, x, n, context)
                BN_mod_inverse(kInverse, k, n, context)

                // Honest: s = k⁻¹(e + r·d).
                BN_rand(e, 256, -1, 0)
                BN_mod_mul(t, r, d, n, context)
                BN_mod_add(s, t, e, n, context)
                BN_mod_mul(s, s, kInverse, n, context)
                // Infinity: e = −r·d with any s.
                let minusRD = try number()
                defer { BN_free(minusRD) }
                BN_sub(minusRD, n, t)
                // Doubling: e = r·d and s = 2·r·d·k⁻¹.
                let twice = try number()
                defer { BN_free(twice) }
                BN_mod_add(twice, t, t, n, context)
                BN_mod_mul(twice, twice, kInverse, n, context)

                let cases: [(name: String, digest: [UInt8], signature: [UInt8], valid: Bool)] = [
                    ("honest", bytes(e), bytes(r) + bytes(s), true),
                    ("infinity", bytes(minusRD), bytes(r) + bytes(s), false),
                    ("doubling", bytes(t), bytes(r) + bytes(twice), true),
                ]
                for (name, digest, signature, valid) in cases {
                    let byTable = storerelay_p256_key_table_verify(table, digest, signature, scratch)
                    let byOpenSSL = try Self.verdictOfOpenSSL(key, digest, signature)
                    #expect(byTable == (valid ? 1 : 0), "round \(round): \(name)")
                    #expect((byOpenSSL == 1) == valid, "round \(round): \(name)")
                }
            }
        }
    }

    /// One table shared by four threads at once, good and bad signatures interleaved.
    @Test func oneTableServesManyThreadsAtOnce() throws {
        let signer = try P256PrivateKey.generate()
        let key = try signer.publicKey()
        #expect(key.buildTableNow())
        let messages = (0..<8).map { Array("message \($0)".utf8) }
        let signatures = try messages.map { try signer.signES256($0) }
        let mismatches = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for round in 0..<200 {
                let index = (round + thread) % messages.count
                var signature = signatures[index]
                let valid = round % 3 != 0
                if !valid { signature[round % 64] ^= 0x20 }
                if key.isValidES256Signature(signature, for: messages[index]) != valid { mismatches.withLock { $0 += 1 } }
            }
        }
        #expect(mismatches.current == 0)
    }

    /// The case no random signature reaches (odds 2⁻¹²⁸): x(R) in [n, p), so r = x(R) − n and
    /// the check must try r + n. Built from the equation: with the key Q = R itself, a zero
    /// digest and s = r, u1 = 0 and u2 = 1, so R = u2·Q and (r, r) is a valid signature.
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

        let key = try Self.publicKey(encodedPoint: encoded)
        let table = try #require(storerelay_p256_key_table_new(key))
        let scratch = try #require(BN_CTX_new())
        defer { EVP_PKEY_free(key); storerelay_p256_key_table_free(table); BN_CTX_free(scratch) }

        let zeroDigest = [UInt8](repeating: 0, count: 32)
        #expect(storerelay_p256_key_table_verify(table, zeroDigest, r + r, scratch) == 1)
        #expect(try Self.verdictOfOpenSSL(key, zeroDigest, r + r) == 1)
        var otherR = r
        otherR[31] ^= 1
        #expect(storerelay_p256_key_table_verify(table, zeroDigest, otherR + r, scratch) == 0)
        #expect(storerelay_p256_key_table_verify(table, zeroDigest, xBytes + r, scratch) == 0)  // r ≥ n
        ERR_clear_error()
    }

    /// A signature made by OpenSSL, then mangled in every way that matters to ECDSA's range
    /// checks and arithmetic, checked by the table and by OpenSSL alone.
    @Test func givesOpenSSLsVerdictOnGoodAndMangledSignatures() throws {
        var random = SeededGenerator(seed: 0x5EC1)
        var checked = 0, valid = 0
        for _ in 0..<4 {
            let signer = try P256PrivateKey.generate()
            let key = try signer.publicKey()
            #expect(key.buildTableNow())
            let stranger = try P256PrivateKey.generate().publicKey()
            #expect(stranger.buildTableNow())
            for round in 0..<40 {
                let message = (0..<(1 + round * 37)).map { _ in UInt8.random(in: 0...255, using: &random) }
                let signature = try signer.signES256(message)
                let r = Array(signature[0..<32]), s = Array(signature[32..<64])
                let zero = [UInt8](repeating: 0, count: 32), one = [UInt8](repeating: 0, count: 31) + [1]
                var flippedR = signature, flippedS = signature, otherMessage = message
                flippedR[Int.random(in: 0..<32, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                flippedS[Int.random(in: 32..<64, using: &random)] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                otherMessage[Int.random(in: 0..<message.count, using: &random)] ^= 0x80
                let candidates: [(signature: [UInt8], message: [UInt8], expected: Bool?)] = [
                    (signature, message, true),
                    // (r, n − s) is the same signature's twin; ECDSA (and OpenSSL) accept it.
                    (r + Self.subtract(Self.order, s), message, true),
                    (signature, otherMessage, false),
                    (flippedR, message, false),
                    (flippedS, message, false),
                    (zero + s, message, false),
                    (r + zero, message, false),
                    (Self.order + s, message, false),
                    (r + Self.order, message, false),
                    (r + Self.subtract(Self.order, one), message, nil),
                    (Self.subtract(Self.order, one) + s, message, nil),
                    ([UInt8](repeating: 0xFF, count: 64), message, false),
                    (s + r, message, nil),
                ]
                for (index, (candidate, candidateMessage, expected)) in candidates.enumerated() {
                    let byTable = key.isValidES256Signature(candidate, for: candidateMessage)
                    let byOpenSSL = key.isValidES256SignatureWithoutTable(candidate, for: candidateMessage)
                    #expect(byTable == byOpenSSL, "round \(round), case \(index)")
                    if let expected { #expect(byTable == expected, "round \(round), case \(index)") }
                    #expect(!stranger.isValidES256Signature(candidate, for: candidateMessage), "round \(round), case \(index)")
                    checked += 1
                    if byTable { valid += 1 }
                }
            }
        }
        #expect(checked == 4 * 40 * 13)
        #expect(valid >= 4 * 40 * 2)
    }

    /// Apple's own keys, from every real notification and signed datum: each signature
    /// verifies through the table, and the tampered ones do not.
    @Test func verifiesApplesRealSignatures() throws {
        let files = Vectors.files(in: "real/v2-notifications") + Vectors.files(in: "real/signed-data")
            + Vectors.files(in: "negative")
        guard !files.isEmpty else {
            print("KeyTableTests: skipped, ../shared/vectors not found")
            return
        }
        for file in files {
            let jws = try #require(Vectors.text(file)).trimmingCharacters(in: .whitespacesAndNewlines)
            let parts = jws.split(separator: ".")
            try #require(parts.count == 3, "\(file)")
            let header = String(decoding: try #require(Base64.urlDecode(parts[0])), as: UTF8.self)
            let leafText = try #require(header.components(separatedBy: #""x5c":[""#).last?.split(separator: "\"").first)
            let key = try Certificate(derBytes: try #require(Base64.decode(leafText))).publicKey()
            #expect(key.buildTableNow())
            let input = Array((parts[0] + "." + parts[1]).utf8)
            let signature = try #require(Base64.urlDecode(parts[2]))
            let expected = !file.hasPrefix("negative/")
            #expect(key.isValidES256Signature(signature, for: input) == expected, "\(file)")
            #expect(key.isValidES256SignatureWithoutTable(signature, for: input) == expected, "\(file)")
        }
    }

    /// A key that keeps verifying builds its table on its own, in the background, and keeps
    /// answering correctly before, while and after.
    @Test func aKeyCheckedRepeatedlyBuildsItsTable() async throws {
        let signer = try P256PrivateKey.generate()
        let key = try signer.publicKey()
        let message = Array("repeated".utf8)
        let signature = try signer.signES256(message)
        var wrong = signature
        wrong[40] ^= 0x10
        for _ in 0..<(PublicKey.checksBeforeTable - 1) {
            #expect(key.isValidES256Signature(signature, for: message))
        }
        #expect(!key.hasTable)
        #expect(!key.isValidES256Signature(wrong, for: message))
        let deadline = Date().addingTimeInterval(10)
        while !key.hasTable, Date() < deadline {
            #expect(key.isValidES256Signature(signature, for: message))
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(key.hasTable)
        #expect(key.isValidES256Signature(signature, for: message))
        #expect(!key.isValidES256Signature(wrong, for: message))
    }
}
