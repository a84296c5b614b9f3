import Testing
import StoreRelayVerification
import StoreRelayCore
import StoreRelayTestSupport

/// Chains and JWS made with the openssl CLI (TestCertificateAuthority).
@Suite struct GeneratedChainTests {
    let authority = Fixtures.authority

    @Test(arguments: TestCertificateAuthority.Variant.allCases)
    func chainVariants(_ variant: TestCertificateAuthority.Variant) throws {
        let verifier = try Fixtures.testRootVerifier()
        let jws = try authority.signJWS(payload: notificationPayload(), variant: variant)
        switch variant {
        case .valid, .mismatchedX5CRoot:
            let notification = try verifier.verify(signedPayload: jws)
            #expect(notification.environment == .sandbox)
            #expect(notification.bundleId == "com.example.app")
            #expect(notification.appAppleId == 1234)
        case .leafWithoutOID, .intermediateWithoutOID:
            #expect(verificationError { _ = try verifier.verify(signedPayload: jws) }?.reason == .missingAppleOID)
        case .expiredLeaf:
            let error = verificationError { _ = try verifier.verify(signedPayload: jws) }
            #expect(error?.reason == .certificateExpired)
            #expect(error?.code == .signature)
        case .unknownRoot:
            #expect(verificationError { _ = try verifier.verify(signedPayload: jws) }?.reason == .untrustedChain)
        }
        // The built-in Apple root trusts none of them.
        let apple = verificationError { _ = try NotificationVerifier().verify(signedPayload: jws) }
        #expect(apple?.code == .signature)
    }

    @Test func extraTrustRootsAddToApple() throws {
        let roots = [AppleRootCertificates.appleRootCAG3, try Certificate(pemString: authority.rootPEM)]
        let verifier = try NotificationVerifier(configuration: VerifierConfiguration(trustedRoots: roots))
        #expect(try verifier.verify(signedPayload: authority.signJWS(payload: notificationPayload())).signatureVerified)
    }

    func header(_ alg: String?, certificates: Int = 3) -> String {
        let x5c = authority.chain(.valid).x5c
        let list = (0..<certificates).map { "\"\(x5c[$0 % 3])\"" }.joined(separator: ",")
        return "{" + (alg.map { "\"alg\":\"\($0)\"," } ?? "") + "\"x5c\":[\(list)]}"
    }

    @Test(arguments: ["none", "HS256", "RS256", "ES384", "es256", nil] as [String?])
    func rejectsEveryAlgorithmButES256(_ alg: String?) throws {
        let verifier = try Fixtures.testRootVerifier()
        let jws = try authority.signJWS(payload: notificationPayload(), header: header(alg))
        let error = verificationError { _ = try verifier.verify(signedPayload: jws) }
        #expect(error?.code == .signature)
        #expect(error?.reason == .unsupportedAlgorithm)
        // alg none with an empty signature segment, the classic downgrade.
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        let unsigned = segments[0] + "." + segments[1] + "."
        #expect(verificationError { _ = try verifier.verify(signedPayload: String(unsigned)) }?.code == .signature)
    }

    @Test(arguments: [0, 1, 2, 4])
    func rejectsChainsThatAreNotThreeCertificates(_ count: Int) throws {
        let verifier = try Fixtures.testRootVerifier()
        let jws = try authority.signJWS(payload: notificationPayload(), header: header("ES256", certificates: count))
        let error = verificationError { _ = try verifier.verify(signedPayload: jws) }
        #expect(error?.reason == .invalidChainLength)
        #expect(error?.code.httpStatus == 401)
    }

    @Test func rejectsBrokenCertificatesInX5C() throws {
        let verifier = try Fixtures.testRootVerifier()
        let x5c = authority.chain(.valid).x5c
        for bad in [[x5c[0], "not base64!", x5c[2]], [x5c[0], x5c[1], "AAAA"], ["", x5c[1], x5c[2]]] {
            let header = #"{"alg":"ES256","x5c":["# + bad.map { "\"\($0)\"" }.joined(separator: ",") + "]}"
            let jws = try authority.signJWS(payload: notificationPayload(), header: header)
            #expect(verificationError { _ = try verifier.verify(signedPayload: jws) }?.reason == .invalidCertificate)
        }
    }

    @Test func rejectsMalformedInput() throws {
        let verifier = try Fixtures.testRootVerifier()
        let good = try authority.signJWS(payload: notificationPayload())
        let segments = good.split(separator: ".").map(String.init)
        let cases: [(String, VerificationError.Reason)] = [
            ("", .notJWS),
            ("garbage", .notJWS),
            ("a.b", .notJWS),
            ("a.b.c.d", .notJWS),
            (".\(segments[1]).\(segments[2])", .notJWS),
            ("\(segments[0]).\(segments[1])=.\(segments[2])", .invalidBase64),
            ("\(segments[0]).\(segments[1]).\(segments[2])!", .invalidBase64),
            ("\(segments[0]) .\(segments[1]).\(segments[2])", .invalidBase64),
            (Base64.urlEncode(Array("{not json".utf8)) + ".\(segments[1]).\(segments[2])", .invalidJSON),
            ("\(segments[0])." + Base64.urlEncode(Array("[1,2]".utf8)) + ".\(segments[2])", .invalidJSON),
            (String(repeating: "A", count: (1 << 20) + 1), .notJWS),
        ]
        for (input, reason) in cases {
            let error = verificationError { _ = try verifier.verify(signedPayload: input) }
            #expect(error?.code == .malformed, "\(input.prefix(40))")
            #expect(error?.reason == reason, "\(input.prefix(40))")
        }
        // Authentic, but not a notification.
        let transaction = try authority.signJWS(payload: #"{"transactionId":"1","environment":"Sandbox","signedDate":\#(Timestamp.now().milliseconds)}"#)
        let notNotification = verificationError { _ = try verifier.verify(signedPayload: transaction) }
        #expect(notNotification?.code == .malformed)
        #expect(notNotification?.reason == .notNotification)
        // Not authentic and not a notification: the signature is judged first.
        let forged = try authority.signJWS(payload: #"{"hello":1}"#, variant: .unknownRoot)
        #expect(verificationError { _ = try verifier.verify(signedPayload: forged) }?.code == .signature)
    }

    @Test func tamperedPayloadFailsTheSignature() throws {
        let verifier = try Fixtures.testRootVerifier()
        let jws = try authority.signJWS(payload: notificationPayload(bundleId: "com.example.app"))
        var segments = jws.split(separator: ".").map(String.init)
        let payload = String(decoding: Base64.urlDecode(segments[1])!, as: UTF8.self).replacingOccurrences(of: "com.example.app", with: "com.evil.app!")
        segments[1] = Base64.urlEncode(Array(payload.utf8))
        let error = verificationError { _ = try verifier.verify(signedPayload: segments.joined(separator: ".")) }
        #expect(error?.reason == .invalidSignature)
    }
}
