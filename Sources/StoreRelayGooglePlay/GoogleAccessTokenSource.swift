public import StoreRelayCore
public import StoreRelayNet

/// OAuth2 access tokens for a service account, by the JWT-bearer flow (RFC 7523 §2.1, as
/// Google's "Using OAuth 2.0 for Server to Server Applications" describes): an assertion
/// signed RS256 with the account's key — header `{"alg":"RS256","kid":private_key_id,"typ":"JWT"}`,
/// claims `iss` client_email, `scope` androidpublisher, `aud` token_uri, `iat`, `exp` one
/// hour later — POSTed form-encoded to `token_uri`, which answers `access_token` and
/// `expires_in`.
///
/// A token is reused until five minutes before it expires. While one is being fetched,
/// later callers wait for that same answer instead of asking again (one request in flight,
/// whatever the number of enrichments waiting). No thread waits: callers are called back.
public final class GoogleAccessTokenSource: Sendable {
    public static let scope = "https://www.googleapis.com/auth/androidpublisher"
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"
    /// The assertion's lifetime: Google accepts at most one hour.
    static let assertionLifetime: Int64 = 3600
    /// A cached token is replaced once less than this remains.
    public static let renewWhenLeft: Duration = .seconds(5 * 60)
    /// Token answers are a few hundred bytes.
    static let maxAnswerBytes = 64 * 1024

    private let account: ServiceAccount
    private let http: HTTPClient
    private let caFile: String?
    private let clock: any TimeSource
    private let timeout: Duration

    private struct Cached: Sendable {
        let token: String
        /// UNIX milliseconds at which Google said it expires.
        let expires: Int64
    }
    private struct State {
        var cached: Cached?
        /// Callers waiting for the request in flight; nil when none is.
        var waiting: [@Sendable (Result<String, PlayAPIError>) -> Void]?
        var requests = 0
    }
    private let state = Locked(State())

    /// `caFile` is trusted besides the system store for `token_uri` (a test's fake Google).
    public init(account: ServiceAccount, http: HTTPClient, caFile: String? = nil,
                clock: any TimeSource = WallClock(), timeout: Duration = .seconds(30)) {
        self.account = account
        self.http = http
        self.caFile = caFile
        self.clock = clock
        self.timeout = timeout
    }

    /// Token requests sent so far (for tests and logs).
    public var requestsSent: Int { state.current.requests }

    /// Calls back with a token valid for at least five more minutes: the cached one at once,
    /// else the answer of the one request in flight (started now if none is).
    public func token(completion: @escaping @Sendable (Result<String, PlayAPIError>) -> Void) {
        let now = clock.now().milliseconds
        enum Next { case cached(String), wait, fetch }
        let next = state.withLock { state -> Next in
            if let cached = state.cached, cached.expires - now > Self.renewWhenLeft.wholeMilliseconds { return .cached(cached.token) }
            if state.waiting != nil {
                state.waiting!.append(completion)
                return .wait
            }
            state.waiting = [completion]
            state.requests += 1
            return .fetch
        }
        switch next {
        case .cached(let token): completion(.success(token))
        case .wait: return
        case .fetch: fetch(issuedAt: now)
        }
    }

    /// Forgets `token` if it is still the cached one: the API refused it (revoked, or the
    /// clock was wrong), so the next caller gets a fresh one.
    public func invalidate(_ token: String) {
        state.withLock { state in
            if state.cached?.token == token { state.cached = nil }
        }
    }

    private func fetch(issuedAt now: Int64) {
        let finish: @Sendable (Result<(String, Int64), PlayAPIError>) -> Void = { [state] result in
            let waiting = state.withLock { state in
                if case .success(let (token, expires)) = result { state.cached = Cached(token: token, expires: expires) }
                defer { state.waiting = nil }
                return state.waiting ?? []
            }
            let answer = result.map(\.0)
            for caller in waiting { caller(answer) }
        }
        let assertion: String
        do {
            assertion = try Self.assertion(account, issuedAt: now / 1000)
        } catch {
            return finish(.failure(error))
        }
        let form = "grant_type=" + PlayHTTP.percentEncoded(Self.grantType) + "&assertion=" + PlayHTTP.percentEncoded(assertion)
        let headers = HTTPHeaders([
            ("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json"), ("User-Agent", PlayHTTP.userAgent),
        ])
        let request = HTTPClientRequest(method: "POST", url: account.tokenURI, headers: headers, body: Array(form.utf8), extraCAFile: caFile)
        let what = "POST \(account.tokenURI.hostHeader) (service account \(account.clientEmail))"
        http.execute(request, timeout: timeout) { result in
            finish(Self.parse(PlayHTTP.classify(result, what: what, maxBytes: Self.maxAnswerBytes), what: what, requestedAt: now))
        }
    }

    /// The token endpoint's answer: `access_token` and `expires_in` (seconds), or why not.
    /// OAuth2 errors naming the credentials (RFC 6749 §5.2) are `.unauthorized`.
    static func parse(_ result: Result<JSONValue, PlayAPIError>, what: String, requestedAt: Int64) -> Result<(String, Int64), PlayAPIError> {
        switch result {
        case .failure(var error):
            if error.kind == .rejected, ["invalid_grant", "invalid_client", "unauthorized_client"].contains(error.googleError ?? "") {
                error = PlayAPIError(.unauthorized, error.message + "; check the service-account file (a deleted key, a disabled account)",
                                     status: error.status, googleError: error.googleError)
            }
            return .failure(error)
        case .success(let json):
            guard let token = json["access_token"]?.stringValue, !token.isEmpty,
                  token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }), token.utf8.count <= 4096
            else {
                return .failure(PlayAPIError(.malformedResponse, "\(what) answered without a usable access_token"))
            }
            if let type = json["token_type"]?.stringValue, type.lowercased() != "bearer" {
                return .failure(PlayAPIError(.malformedResponse, "\(what) answered a \(type.prefix(20)) token, not a Bearer one"))
            }
            guard let lifetime = json["expires_in"]?.int64Value, lifetime > 0, lifetime <= 86_400 else {
                return .failure(PlayAPIError(.malformedResponse, "\(what) answered without a usable expires_in"))
            }
            // Counted from when it was asked for: the answer may have taken a while.
            return .success((token, requestedAt + lifetime * 1000))
        }
    }

    /// The signed assertion; `iat` and `exp` are whole UNIX seconds.
    static func assertion(_ account: ServiceAccount, issuedAt: Int64) throws(PlayAPIError) -> String {
        let header = JSONValue.object(JSONObject([("alg", "RS256"), ("kid", .string(account.privateKeyId)), ("typ", "JWT")]))
        let claims = JSONValue.object(JSONObject([
            ("iss", .string(account.clientEmail)), ("scope", .string(scope)), ("aud", .string(account.tokenURI.absoluteString)),
            ("iat", .integer(issuedAt)), ("exp", .integer(issuedAt + assertionLifetime)),
        ]))
        let input = Base64.urlEncode(header.serializedBytes()) + "." + Base64.urlEncode(claims.serializedBytes())
        do {
            return input + "." + Base64.urlEncode(try account.key.signRS256(Array(input.utf8)))
        } catch {
            throw PlayAPIError(.configuration, "cannot sign the OAuth2 assertion for \(account.clientEmail): \(error.reason)")
        }
    }
}
