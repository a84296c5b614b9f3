import Testing
import StoreRelayGooglePlay
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// The push token rules of SPEC "Google Play real-time developer notifications", one hostile
/// token at a time, against keys generated here and an injected clock.
@Suite struct PushTokenVerifierTests {
    static let signer = try! PlayPushSigner(kids: ["key-1", "key-2", "rogue"])
    let now: Int64 = 1_800_000_000
    var time: Timestamp { Timestamp(seconds: now) }
    let verifier = PushTokenVerifier(subscribers: [
        .init(audience: PlayPushSigner.audience, account: PlayPushSigner.account),
        .init(audience: "https://other.example/play", account: "other@acme.iam.gserviceaccount.com"),
    ])
    /// Google publishes key-1 and key-2; "rogue" is a key of the attacker's.
    var keys: JSONWebKeySet { try! JSONWebKeySet(json: Array(try! Self.signer.keySetDocument(["key-1", "key-2"]).utf8)) }

    func verdict(_ token: String, scheme: String = "Bearer ") -> PushTokenVerdict {
        verifier.verify(authorization: scheme + token, keys: keys, now: time)
    }

    func claims(_ change: (inout [(String, JSONValue)]) -> Void) -> [(String, JSONValue)] {
        var claims = PlayPushSigner.claims(now: now)
        change(&claims)
        return claims
    }

    func isInvalid(_ verdict: PushTokenVerdict, _ fragment: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .invalid(let reason) = verdict else {
            Issue.record("expected invalid (\(fragment)), got \(verdict)", sourceLocation: sourceLocation)
            return
        }
        #expect(reason.contains(fragment), "\(reason)", sourceLocation: sourceLocation)
    }

    @Test func acceptsGooglesTokenForADeclaredSubscription() throws {
        guard case .valid(let accepted) = verdict(try Self.signer.token(claims: PlayPushSigner.claims(now: now))) else {
            Issue.record("a valid token was refused")
            return
        }
        #expect(accepted.audience == PlayPushSigner.audience)
        #expect(accepted.email == PlayPushSigner.account)
        #expect(accepted.expiresAt == Timestamp(seconds: now + 3600))
        // Both issuer spellings Google uses, the second key, and a lower-case scheme.
        let bare = try Self.signer.token(kid: "key-2", claims: claims { $0[6] = ("iss", "accounts.google.com") })
        #expect(verdict(bare, scheme: "bearer ").isValid)
        #expect(verdict(bare, scheme: "BEARER   ").isValid)
    }

    @Test func refusesEveryAlgorithmButRS256() throws {
        let claims = Base64.urlEncode(Array(JSONValue.object(JSONObject(PlayPushSigner.claims(now: now).map { (key: $0.0, value: $0.1) })).serialized().utf8))
        func unsigned(_ header: String, signature: String) -> String {
            Base64.urlEncode(Array(header.utf8)) + "." + claims + "." + signature
        }
        // alg none, with and without a signature segment.
        isInvalid(verdict(unsigned(#"{"alg":"none","kid":"key-1"}"#, signature: "")), "empty segment")
        isInvalid(verdict(unsigned(#"{"alg":"none","kid":"key-1"}"#, signature: "AAAA")), "only RS256")
        isInvalid(verdict(unsigned(#"{"alg":"None","kid":"key-1"}"#, signature: "AAAA")), "only RS256")
        // HS256 keyed with the public key's bytes: the key-confusion attack.
        let (n, e) = try Self.signer.keys["key-1"]!.publicKey().components()
        for secret in [n, e + n, Array(try Self.signer.keySetDocument(["key-1"]).utf8)] {
            let header = Base64.urlEncode(Array(#"{"alg":"HS256","kid":"key-1","typ":"JWT"}"#.utf8))
            let input = header + "." + claims
            let mac = HMACSHA256.authenticationCode(for: Array(input.utf8), key: secret)
            isInvalid(verdict(input + "." + Base64.urlEncode(mac)), "only RS256")
        }
        for alg in ["RS512", "ES256", "PS256", "rs256", "RS256 ", ""] {
            let token = try Self.signer.token(claims: PlayPushSigner.claims(now: now), header: #"{"alg":"\#(alg)","kid":"key-1"}"#)
            isInvalid(verdict(token), "only RS256")
        }
        isInvalid(verdict(try Self.signer.token(claims: PlayPushSigner.claims(now: now), header: #"{"kid":"key-1"}"#)), "no alg")
        isInvalid(verdict(try Self.signer.token(claims: PlayPushSigner.claims(now: now), header: #"{"alg":["RS256"],"kid":"key-1"}"#)), "no alg")
    }

    @Test func anUnknownKidIsNotRefusedButAsksForKeys() throws {
        let token = try Self.signer.token(kid: "rogue", claims: PlayPushSigner.claims(now: now))
        #expect(verdict(token) == .unknownKey("rogue"))
        #expect(verifier.verify(authorization: "Bearer " + token, keys: nil, now: time) == .noKeys)
        // No kid at all is no Google token.
        isInvalid(verdict(try Self.signer.token(claims: PlayPushSigner.claims(now: now), header: #"{"alg":"RS256"}"#)), "no kid")
    }

    @Test func aKidNamingAnotherKeyFailsTheSignature() throws {
        // Signed with the attacker's key, labelled as Google's key-1; and key-2's signature under key-1's name.
        isInvalid(verdict(try Self.signer.token(kid: "key-1", claims: PlayPushSigner.claims(now: now), signWith: "rogue")), "signature does not verify")
        isInvalid(verdict(try Self.signer.token(kid: "key-1", claims: PlayPushSigner.claims(now: now), signWith: "key-2")), "signature does not verify")
        // A valid token whose claims were changed after signing.
        let valid = try Self.signer.token(claims: PlayPushSigner.claims(now: now))
        let parts = valid.split(separator: ".").map(String.init)
        let forged = Base64.urlEncode(Array(JSONValue.object(JSONObject(claims { $0[0] = ("aud", "https://other.example/play") }.map { (key: $0.0, value: $0.1) })).serialized().utf8))
        isInvalid(verdict(parts[0] + "." + forged + "." + parts[2]), "signature does not verify")
    }

    @Test func checksEveryClaim() throws {
        func token(_ change: (inout [(String, JSONValue)]) -> Void) throws -> String { try Self.signer.token(claims: claims(change)) }
        isInvalid(verdict(try token { $0[4] = ("exp", .integer(now - 61)) }), "expired")
        #expect(verdict(try token { $0[4] = ("exp", .integer(now - 30)) }).isValid, "within the clock skew")
        isInvalid(verdict(try token { $0[5] = ("iat", .integer(now + 3600)) }), "in the future")
        #expect(verdict(try token { $0[5] = ("iat", .integer(now + 30)) }).isValid, "within the clock skew")
        isInvalid(verdict(try token { $0.remove(at: 4) }), "exp is missing")
        isInvalid(verdict(try token { $0[4] = ("exp", "soon") }), "not a time")
        isInvalid(verdict(try token { $0[6] = ("iss", "https://evil.example") }), "not Google's")
        isInvalid(verdict(try token { $0.remove(at: 6) }), "not Google's")
        isInvalid(verdict(try token { $0[0] = ("aud", "https://relay.example.test/other") }), "no declared app's push-audience")
        isInvalid(verdict(try token { $0[0] = ("aud", .array([.string(PlayPushSigner.audience)])) }), "not a string")
        isInvalid(verdict(try token { $0[2] = ("email", "attacker@evil.iam.gserviceaccount.com") }), "not the push-account")
        // The other app's account with this app's audience: each audience has its own account.
        isInvalid(verdict(try token { $0[2] = ("email", "other@acme.iam.gserviceaccount.com") }), "not the push-account")
        isInvalid(verdict(try token { $0.remove(at: 2) }), "no email")
        isInvalid(verdict(try token { $0[3] = ("email_verified", false) }), "email_verified")
        isInvalid(verdict(try token { $0[3] = ("email_verified", "false") }), "email_verified")
        isInvalid(verdict(try token { $0.remove(at: 3) }), "email_verified is missing")
        isInvalid(verdict(try token { $0.append(("nbf", .integer(now + 3600))) }), "not valid yet")
    }

    @Test func refusesMalformedAndHostileHeaders() throws {
        let valid = try Self.signer.token(claims: PlayPushSigner.claims(now: now))
        isInvalid(verifier.verify(authorization: nil, keys: keys, now: time), "no Authorization")
        isInvalid(verifier.verify(authorization: "", keys: keys, now: time), "no Authorization")
        isInvalid(verdict(valid, scheme: "Basic "), "not 'Bearer")
        isInvalid(verdict(valid, scheme: "Bearer"), "not 'Bearer")
        isInvalid(verdict(valid, scheme: "Bearer\u{0}"), "not 'Bearer")
        isInvalid(verdict("", scheme: "Bearer "), "not 'Bearer")
        isInvalid(verdict(valid + "." + "AAAA"), "4 segments")
        isInvalid(verdict(valid.split(separator: ".").prefix(2).joined(separator: ".")), "2 segments")
        isInvalid(verdict("%%%." + valid.split(separator: ".").dropFirst().joined(separator: ".")), "header is not base64url")
        isInvalid(verdict(valid + "="), "signature is not base64url")
        let parts = valid.split(separator: ".").map(String.init)
        isInvalid(verdict(Base64.urlEncode(Array("{not json".utf8)) + "." + parts[1] + "." + parts[2]), "header is not JSON")
        isInvalid(verdict(Base64.urlEncode(Array("[1]".utf8)) + "." + parts[1] + "." + parts[2]), "not a JSON object")
        isInvalid(verdict(parts[0] + "." + Base64.urlEncode(Array("\"x\"".utf8)) + "." + parts[2]), "claims is not a JSON object")
        // A duplicate member is ambiguous: refused before anything else is read.
        let duplicate = try Self.signer.token(claims: PlayPushSigner.claims(now: now), header: #"{"alg":"none","alg":"RS256","kid":"key-1"}"#)
        isInvalid(verdict(duplicate), "not JSON")
        let claimsText = JSONValue.object(JSONObject(PlayPushSigner.claims(now: now).map { (key: $0.0, value: $0.1) })).serialized()
        let twice = String(claimsText.dropLast()) + #","aud":"https://relay.example.test/other"}"#
        isInvalid(verdict(try Self.signer.token(claims: [], claimsText: twice)), "claims is not JSON")
        // Huge: a token past 8 KiB is refused without being decoded.
        var padded = PlayPushSigner.claims(now: now)
        padded.append(("pad", .string(String(repeating: "x", count: 9000))))
        isInvalid(verdict(try Self.signer.token(claims: padded)), "at most 8192")
        isInvalid(verdict(String(repeating: "A", count: 1 << 20)), "at most 8192")
        isInvalid(verdict(try Self.signer.token(claims: PlayPushSigner.claims(now: now), header: #"{"alg":"RS256","kid":"key-1","crit":["exp"]}"#)), "crit")
    }
}

extension PushTokenVerdict {
    var isValid: Bool {
        if case .valid = self { return true }
        return false
    }
}
