import StoreRelayCore

/// The bearer tokens of one app's App Store Server API requests (SPEC "Reconciliation with
/// Apple"): header `{"alg":"ES256","kid":..,"typ":"JWT"}`, claims `iss`, `iat`, `exp`, `aud`
/// `appstoreconnect-v1` and `bid`, signed with the In-App Purchase key (raw R‖S).
///
/// A token lives 20 minutes (Apple refuses more than 60) and is replaced once less than 5
/// remain, so no request ever carries one about to expire, and a pass of hundreds of pages
/// signs a handful rather than one each.
final class APITokenSource: Sendable {
    static let lifetime: Int64 = 20 * 60
    static let renewWhenLeft: Int64 = 5 * 60

    private let credentials: APICredentials
    private let clock: any TimeSource
    private let cached = Locked<(token: String, expires: Int64)?>(nil)

    init(credentials: APICredentials, clock: any TimeSource) {
        self.credentials = credentials
        self.clock = clock
    }

    /// A token valid for at least five more minutes.
    func token() throws(AppStoreAPIError) -> String {
        let now = clock.now().milliseconds / 1000
        if let cached = cached.current, cached.expires - now > Self.renewWhenLeft { return cached.token }
        let token = try Self.sign(credentials, issuedAt: now, expires: now + Self.lifetime)
        cached.withLock { $0 = (token, now + Self.lifetime) }
        return token
    }

    /// One compact JWS; `iat` and `exp` are whole UNIX seconds, as Apple asks.
    static func sign(_ credentials: APICredentials, issuedAt: Int64, expires: Int64) throws(AppStoreAPIError) -> String {
        let header = JSONValue.object(JSONObject([("alg", "ES256"), ("kid", .string(credentials.keyId)), ("typ", "JWT")]))
        let claims = JSONValue.object(JSONObject([
            ("iss", .string(credentials.issuerId)), ("iat", .integer(issuedAt)), ("exp", .integer(expires)),
            ("aud", "appstoreconnect-v1"), ("bid", .string(credentials.bundleId)),
        ]))
        let input = Base64.urlEncode(header.serializedBytes()) + "." + Base64.urlEncode(claims.serializedBytes())
        do {
            return input + "." + Base64.urlEncode(try credentials.key.signES256(Array(input.utf8)))
        } catch {
            throw AppStoreAPIError(.configuration, "cannot sign an App Store Server API token: \(error.reason)")
        }
    }
}
