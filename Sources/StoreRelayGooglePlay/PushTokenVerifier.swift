import StoreRelayCore

/// What a push's token proves: valid (Google signed it for one of our push subscriptions),
/// signed by a key we do not hold (yet), or not acceptable at all.
public enum PushTokenVerdict: Sendable, Equatable {
    case valid(PushTokenClaims)
    /// The header names a key the current key set lacks: Google may have rotated. The
    /// caller answers 503 (Pub/Sub retries) and asks the key set source for one refresh.
    case unknownKey(String)
    /// No key set has been fetched yet: nothing can be verified, so 503.
    case noKeys
    /// Forged, expired, for another audience or account, or not a Google token: 401.
    case invalid(String)
}

/// The claims of a verified push token that the gateway uses.
public struct PushTokenClaims: Sendable, Equatable {
    public var issuer: String
    public var audience: String
    public var email: String
    public var expiresAt: Timestamp
    public var issuedAt: Timestamp?
    public var subject: String?
}

/// Checks a Pub/Sub push token exactly as SPEC "Google Play real-time developer
/// notifications" says: RS256 only, the `kid` in Google's key set, the signature valid,
/// `iss` Google's, `aud` and `email` one declared app's push subscription with
/// `email_verified` true, not expired. Pure: the keys and the time are passed in.
public struct PushTokenVerifier: Sendable {
    /// One push subscription's identity: its audience and service account.
    public struct Subscriber: Sendable, Hashable {
        public var audience: String
        public var account: String
        public init(audience: String, account: String) {
            self.audience = audience
            self.account = account
        }
    }

    public static let issuers: Set<String> = ["https://accounts.google.com", "accounts.google.com"]

    /// The push subscriptions accepted (every declared app's).
    public var subscribers: Set<Subscriber>
    /// Tolerated difference between Google's clock and ours, both ways.
    public var clockSkew: Duration

    public init(subscribers: Set<Subscriber>, clockSkew: Duration = .seconds(60)) {
        self.subscribers = subscribers
        self.clockSkew = clockSkew
    }

    /// The verdict on the `Authorization` header value of one push.
    public func verify(authorization: String?, keys: JSONWebKeySet?, now: Timestamp) -> PushTokenVerdict {
        let token: PushToken
        do {
            token = try PushToken.parse(authorization: authorization)
        } catch {
            return .invalid(error.reason)
        }
        return verify(token, keys: keys, now: now)
    }

    public func verify(_ token: PushToken, keys: JSONWebKeySet?, now: Timestamp) -> PushTokenVerdict {
        // RFC 8725 §3.1: the algorithm is ours to choose, never the token's. `none`, HS256
        // (the public key's bytes as an HMAC secret) and everything else are refused before
        // any key is touched.
        guard let algorithm = token.algorithm else { return .invalid("The token header has no alg.") }
        guard algorithm == "RS256" else {
            return .invalid("The token's alg is \(Self.quoted(algorithm)); only RS256 is accepted.")
        }
        if token.header["crit"] != nil {
            return .invalid("The token header has crit extensions, which are not supported.")
        }
        guard let kid = token.keyId, !kid.isEmpty else { return .invalid("The token header has no kid.") }
        guard let keys else { return .noKeys }
        guard let key = keys.keys[kid] else { return .unknownKey(kid) }
        guard key.isValidRS256Signature(token.signature, for: token.signingInput) else {
            return .invalid("The token's signature does not verify with Google's key \(Self.quoted(kid)).")
        }
        return checkClaims(token.claims, now: now)
    }

    /// The claims of a token whose signature verified.
    func checkClaims(_ claims: JSONObject, now: Timestamp) -> PushTokenVerdict {
        guard let issuer = claims["iss"]?.stringValue, Self.issuers.contains(issuer) else {
            return .invalid("The token's iss is \(Self.describe(claims["iss"])), not Google's (https://accounts.google.com).")
        }
        guard let audience = claims["aud"]?.stringValue else {
            return .invalid("The token's aud is \(Self.describe(claims["aud"])), not a string.")
        }
        guard let email = claims["email"]?.stringValue else {
            return .invalid("The token has no email claim (the push subscription's service account).")
        }
        guard subscribers.contains(where: { $0.audience == audience }) else {
            return .invalid("The token's aud \(Self.quoted(audience)) is no declared app's push-audience.")
        }
        guard subscribers.contains(Subscriber(audience: audience, account: email)) else {
            return .invalid("The token's email \(Self.quoted(email)) is not the push-account of the app with push-audience \(Self.quoted(audience)).")
        }
        switch claims["email_verified"] {
        case .bool(true)?, .string("true")?: break
        default: return .invalid("The token's email_verified is \(Self.describe(claims["email_verified"])), not true.")
        }
        let skew = clockSkew.wholeMilliseconds
        guard let exp = Self.seconds(claims["exp"]) else {
            return .invalid("The token's exp is \(Self.describe(claims["exp"])), not a time in seconds.")
        }
        let expiresAt = Timestamp(milliseconds: exp * 1000)
        guard now.milliseconds <= expiresAt.milliseconds + skew else {
            return .invalid("The token expired at \(expiresAt.iso8601).")
        }
        var issuedAt: Timestamp?
        if let iatValue = claims["iat"] {
            guard let iat = Self.seconds(iatValue) else {
                return .invalid("The token's iat is \(Self.describe(iatValue)), not a time in seconds.")
            }
            issuedAt = Timestamp(milliseconds: iat * 1000)
            guard iat * 1000 <= now.milliseconds + skew else {
                return .invalid("The token's iat \(Timestamp(milliseconds: iat * 1000).iso8601) is in the future.")
            }
        }
        if let nbf = claims["nbf"] {
            guard let notBefore = Self.seconds(nbf), notBefore * 1000 <= now.milliseconds + skew else {
                return .invalid("The token is not valid yet (nbf \(Self.describe(nbf))).")
            }
        }
        return .valid(PushTokenClaims(issuer: issuer, audience: audience, email: email, expiresAt: expiresAt,
                                      issuedAt: issuedAt, subject: claims["sub"]?.stringValue))
    }

    /// A NumericDate (RFC 7519 §2) as whole seconds, within a sane range (no overflow when
    /// turned into milliseconds).
    private static func seconds(_ value: JSONValue?) -> Int64? {
        guard let seconds = value?.int64Value ?? value?.doubleValue.flatMap({ $0.isFinite ? Int64(exactly: $0.rounded(.down)) : nil }),
              seconds >= 0, seconds < 100_000_000_000 else { return nil }
        return seconds
    }

    /// A value for a sentence, cut short: tokens are hostile input, and logs are not theirs.
    static func describe(_ value: JSONValue?) -> String {
        guard let value else { return "missing" }
        return String(value.serialized().prefix(80))
    }

    static func quoted(_ text: String) -> String { "'\(text.prefix(80))'" }
}
