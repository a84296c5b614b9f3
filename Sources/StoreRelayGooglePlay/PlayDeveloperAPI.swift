public import StoreRelayCore
public import StoreRelayNet

/// The two Google Play Developer API calls enrichment makes for one service account:
/// `purchases.subscriptionsv2.get` and `purchases.products.get`, with OAuth2 access tokens
/// from `GoogleAccessTokenSource`.
///
/// Each call is one exchange, except that a 401 drops the cached token and asks once more
/// with a fresh one (a token revoked or expired early). Retrying anything else is
/// `PlayEnrichment`'s job. Answers larger than `maxAnswerBytes` are refused: a purchase is a
/// few kilobytes, and whatever is kept becomes part of every event delivered.
public final class PlayDeveloperAPI: Sendable {
    public static let defaultBaseURL = "https://androidpublisher.googleapis.com"
    public static let defaultMaxAnswerBytes = 256 * 1024

    public let tokens: GoogleAccessTokenSource
    private let base: HTTPURL
    private let caFile: String?
    private let http: HTTPClient
    private let timeout: Duration
    private let maxAnswerBytes: Int

    /// `baseURL` overrides Google's host (`google-api-url`); `caFile` is trusted besides the
    /// system store for it and for the service account's `token_uri`. Plain `http://` is
    /// refused unless the host is loopback.
    public init(
        account: ServiceAccount, baseURL: HTTPURL? = nil, caFile: String? = nil, http: HTTPClient,
        clock: any TimeSource = WallClock(), timeout: Duration = .seconds(30), maxAnswerBytes: Int = defaultMaxAnswerBytes
    ) throws(PlayAPIError) {
        if let baseURL {
            guard baseURL.usesTLS || baseURL.isLoopback else {
                throw PlayAPIError(.configuration, "google-api-url \(baseURL): plain http is allowed only for a loopback host (expected https)")
            }
            base = baseURL
        } else {
            // A constant known to parse.
            base = try! HTTPURL.parse(Self.defaultBaseURL)
        }
        self.caFile = caFile
        self.http = http
        self.timeout = timeout
        self.maxAnswerBytes = maxAnswerBytes
        tokens = GoogleAccessTokenSource(account: account, http: http, caFile: caFile, clock: clock, timeout: timeout)
    }

    /// `GET /androidpublisher/v3/applications/{packageName}/purchases/subscriptionsv2/tokens/{token}`.
    public func subscription(
        packageName: String, purchaseToken: String, completion: @escaping @Sendable (Result<PlayPurchase, PlayAPIError>) -> Void
    ) {
        let path = "/androidpublisher/v3/applications/" + PlayHTTP.percentEncoded(packageName)
            + "/purchases/subscriptionsv2/tokens/" + PlayHTTP.percentEncoded(purchaseToken)
        get(path, what: "purchases.subscriptionsv2.get for \(packageName)", retryUnauthorized: true) { result in
            completion(result.map(PlayPurchase.subscription))
        }
    }

    /// `GET /androidpublisher/v3/applications/{packageName}/purchases/products/{productId}/tokens/{token}`.
    public func product(
        packageName: String, productId: String, purchaseToken: String,
        completion: @escaping @Sendable (Result<PlayPurchase, PlayAPIError>) -> Void
    ) {
        let path = "/androidpublisher/v3/applications/" + PlayHTTP.percentEncoded(packageName)
            + "/purchases/products/" + PlayHTTP.percentEncoded(productId) + "/tokens/" + PlayHTTP.percentEncoded(purchaseToken)
        get(path, what: "purchases.products.get for \(packageName) \(productId.prefix(100))", retryUnauthorized: true) { result in
            completion(result.map(PlayPurchase.product))
        }
    }

    /// One GET with a bearer token; a 401 invalidates that token and, once, asks again.
    private func get(
        _ path: String, what: String, retryUnauthorized: Bool, completion: @escaping @Sendable (Result<JSONValue, PlayAPIError>) -> Void
    ) {
        tokens.token { [self] tokenResult in
            let token: String
            switch tokenResult {
            case .success(let value): token = value
            case .failure(let error): return completion(.failure(error))
            }
            let headers = HTTPHeaders([
                ("Authorization", "Bearer " + token), ("Accept", "application/json"), ("User-Agent", PlayHTTP.userAgent),
            ])
            let request = HTTPClientRequest(method: "GET", url: PlayHTTP.url(base, path), headers: headers, extraCAFile: caFile)
            http.execute(request, timeout: timeout) { [self] result in
                let answer = PlayHTTP.classify(result, what: what, maxBytes: maxAnswerBytes)
                if case .failure(let error) = answer, error.kind == .unauthorized {
                    tokens.invalidate(token)
                    if retryUnauthorized { return get(path, what: what, retryUnauthorized: false, completion: completion) }
                    return completion(.failure(PlayAPIError(
                        .unauthorized, error.message + " with a fresh access token; check that the service account has access in Play Console",
                        status: error.status, googleError: error.googleError)))
                }
                completion(answer)
            }
        }
    }
}
