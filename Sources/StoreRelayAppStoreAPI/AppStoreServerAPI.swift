public import StoreRelayCore
public import StoreRelayNet
import Dispatch

/// The App Store Server API calls StoreRelay makes for one app and environment: Notification
/// History, and test notifications for probes.
///
/// Each call answers through its completion once Apple has answered, retries included; no
/// thread waits meanwhile (a retry's wait is a timer). Retries follow Apple's documentation:
/// 429 waits until `Retry-After` (a UNIX time in milliseconds); network errors, 5xx and the
/// codes Apple marks retryable back off exponentially with jitter; anything else is returned.
public final class AppStoreServerAPI: Sendable {
    /// Apple's hosts (the ones its changelog recommends since 2026; the older
    /// `*.itunes.apple.com` names still answer).
    public static let productionURL = "https://api.storekit.apple.com"
    public static let sandboxURL = "https://api.storekit-sandbox.apple.com"

    public struct Retries: Sendable {
        /// Attempts of one call before its last error is returned: the first and five retries.
        public var attempts = 6
        public var firstBackoff: Duration = .seconds(1)
        public var maximumBackoff: Duration = .seconds(30)
        /// A `Retry-After` further away than this is returned as an error rather than waited.
        public var longestRateLimitWait: Duration = .seconds(600)
        /// 429s one call waits out before it gives up (a server answering 429 forever must
        /// not hold the reconciler forever).
        public var rateLimitWaits = 10
        public init() {}
    }

    public let environment: AppStoreEnvironment
    private let base: HTTPURL
    private let caFile: String?
    private let tokens: APITokenSource
    private let http: HTTPClient
    private let clock: any TimeSource
    private let retries: Retries
    private let timeout: Duration
    /// The retries' waits, which `cancel()` ends all at once when the gateway stops.
    private let waits = RetryWaits(label: "storerelay.appstore-api.retries")

    /// `baseURL` overrides Apple's host for `environment` (`apple-api-url`); `caFile` is
    /// trusted besides the system store for it.
    public init(
        credentials: APICredentials, environment: AppStoreEnvironment, baseURL: HTTPURL? = nil, caFile: String? = nil,
        http: HTTPClient, clock: any TimeSource = WallClock(), retries: Retries = Retries(), timeout: Duration = .seconds(30)
    ) throws(AppStoreAPIError) {
        guard environment == .production || environment == .sandbox else {
            throw AppStoreAPIError(.configuration, "the App Store Server API serves production and sandbox, not \(environment.rawValue)")
        }
        if let baseURL {
            base = baseURL
        } else {
            // Constants known to parse.
            base = try! HTTPURL(environment == .production ? Self.productionURL : Self.sandboxURL)
        }
        self.environment = environment
        self.caFile = caFile
        tokens = APITokenSource(credentials: credentials, clock: clock)
        self.http = http
        self.clock = clock
        self.retries = retries
        self.timeout = timeout
    }

    /// Ends every wait for a retry at once: a call in progress returns `.cancelled` instead of
    /// asking Apple again (an exchange already under way still completes).
    public func cancel() { waits.cancel() }

    // MARK: The calls

    /// One page of `POST /inApps/v1/notifications/history`. Retries stop at `deadline` (UNIX
    /// milliseconds), when given.
    public func notificationHistory(
        _ query: NotificationHistoryQuery, paginationToken: String?, deadline: Int64? = nil,
        completion: @escaping @Sendable (Result<NotificationHistoryPage, AppStoreAPIError>) -> Void
    ) {
        var path = "/inApps/v1/notifications/history"
        if let paginationToken { path += "?paginationToken=" + Self.percentEncoded(paginationToken) }
        perform(Call(method: "POST", path: path, body: query.body, deadline: deadline)) { result in
            completion(result.flatMap { json in
                do throws(AppStoreAPIError) {
                    return .success(try NotificationHistoryPage(json: json))
                } catch {
                    return .failure(error)
                }
            })
        }
    }

    /// `POST /inApps/v1/notifications/test`: asks Apple to send a TEST notification to the
    /// app's configured URL; gives its `testNotificationToken`. Retries stop at `deadline`
    /// (UNIX milliseconds).
    public func requestTestNotification(
        deadline: Int64? = nil, completion: @escaping @Sendable (Result<String, AppStoreAPIError>) -> Void
    ) {
        perform(Call(method: "POST", path: "/inApps/v1/notifications/test", body: [], deadline: deadline)) { result in
            completion(result.flatMap { json in
                guard let token = json["testNotificationToken"]?.stringValue, !token.isEmpty else {
                    return .failure(AppStoreAPIError(.malformedResponse, "the test notification response has no testNotificationToken"))
                }
                return .success(token)
            })
        }
    }

    /// `GET /inApps/v1/notifications/test/{token}`: what Apple sent and how its attempts went.
    /// A 404 TestNotificationNotFoundError (not sent yet) is returned, not retried.
    public func testNotificationStatus(
        token: String, deadline: Int64? = nil, completion: @escaping @Sendable (Result<TestNotificationStatus, AppStoreAPIError>) -> Void
    ) {
        let path = "/inApps/v1/notifications/test/" + Self.percentEncoded(token)
        perform(Call(method: "GET", path: path, body: nil, deadline: deadline)) { result in
            completion(result.map { json in
                TestNotificationStatus(signedPayload: json["signedPayload"]?.stringValue, sendAttempts: SendAttempt.list(json["sendAttempts"]))
            })
        }
    }

    // MARK: Requests and retries

    /// One call to Apple and how many of its attempts failed so far.
    private struct Call: Sendable {
        let method: String
        let path: String
        let body: [UInt8]?
        /// UNIX milliseconds after which no retry starts.
        let deadline: Int64?
        var failures = 0
        var rateLimited = 0
    }

    /// Sends `call`, and again after each retryable failure's wait, until an answer, an
    /// error not worth retrying, the attempts or the deadline run out, or `cancel()`.
    private func perform(_ call: Call, completion: @escaping @Sendable (Result<JSONValue, AppStoreAPIError>) -> Void) {
        if waits.isCancelled { return completion(.failure(AppStoreAPIError(.cancelled, "stopped before asking Apple"))) }
        var timeout = timeout
        if let deadline = call.deadline { timeout = min(timeout, .milliseconds(max(1_000, deadline - clock.now().milliseconds))) }
        send(call.method, call.path, body: call.body, timeout: timeout) { [self] result in
            guard case .failure(let error) = result else { return completion(result) }
            var again = call
            let wait: Duration
            if error.kind == .rateLimited {
                again.rateLimited += 1
                wait = Self.rateLimitWait(retryAt: error.retryAt, now: clock.now().milliseconds)
                guard again.rateLimited <= retries.rateLimitWaits, wait <= retries.longestRateLimitWait else { return completion(result) }
            } else {
                again.failures += 1
                guard error.isRetryable, again.failures < retries.attempts else { return completion(result) }
                var generator = SystemRandomNumberGenerator()
                wait = RetryWaits.backoff(afterFailures: again.failures, first: retries.firstBackoff,
                                          maximum: retries.maximumBackoff, random: &generator)
            }
            if let deadline = again.deadline, clock.now().milliseconds + wait.wholeMilliseconds > deadline { return completion(result) }
            waits.pause(wait) { [self, again] resumed in
                guard resumed else { return completion(.failure(AppStoreAPIError(.cancelled, "stopped while waiting to retry"))) }
                perform(again, completion: completion)
            }
        }
    }

    /// How long to wait out a 429: until Apple's `Retry-After`, a UNIX time in milliseconds.
    /// A proxy's delta-seconds (a small number) is honoured as such; a missing, unreadable or
    /// past value still waits a second, so a 429 never turns into a tight loop.
    static func rateLimitWait(retryAt: Int64?, now: Int64) -> Duration {
        guard let retryAt else { return .seconds(1) }
        // Anything below 10^11 cannot be a UNIX time in milliseconds of this century.
        let milliseconds = retryAt < 100_000_000_000 ? retryAt * 1000 : retryAt - now
        return .milliseconds(max(1000, milliseconds))
    }

    /// One HTTP exchange, its answer classified.
    private func send(
        _ method: String, _ path: String, body: [UInt8]?, timeout: Duration,
        completion: @escaping @Sendable (Result<JSONValue, AppStoreAPIError>) -> Void
    ) {
        let token: String
        do {
            token = try tokens.token()
        } catch {
            return completion(.failure(error))
        }
        var headers = HTTPHeaders([
            ("Authorization", "Bearer " + token), ("Accept", "application/json"),
            ("User-Agent", "StoreRelay/\(StoreRelayVersion.current)"),
        ])
        if body != nil { headers.add(name: "Content-Type", value: "application/json") }
        let url = Self.url(base, path)
        let request = HTTPClientRequest(method: method, url: url, headers: headers, body: body ?? [], extraCAFile: caFile)
        http.execute(request, timeout: timeout) { result in
            completion(Self.classify(result, method: method, path: path))
        }
    }

    /// An exchange's outcome as the call sees it: a JSON object from a 2xx, or why not.
    static func classify(
        _ result: Result<HTTPClientResponse, HTTPClientError>, method: String, path: String
    ) -> Result<JSONValue, AppStoreAPIError> {
        let response: HTTPClientResponse
        switch result {
        case .success(let answer): response = answer
        case .failure(let error): return .failure(AppStoreAPIError(.transport, "\(method) \(path): \(error)"))
        }
        let json = try? JSONValue.parse(response.body)
        guard (200..<300).contains(response.status) else {
            return .failure(Self.error(status: response.status, json: json, headers: response.headers, what: "\(method) \(path.prefix(40))"))
        }
        guard let json, json.objectValue != nil else {
            return .failure(AppStoreAPIError(.malformedResponse, "\(method) \(path.prefix(40)) answered \(response.status) without a JSON object"))
        }
        return .success(json)
    }

    /// Apple's error answer: `{"errorCode":4000017,"errorMessage":"..."}` when it has a body.
    static func error(status: Int, json: JSONValue?, headers: HTTPHeaders, what: String) -> AppStoreAPIError {
        let code = json?["errorCode"]?.int64Value
        let message = json?["errorMessage"]?.stringValue.map { String($0.prefix(200)) }
        let described = "\(what) answered \(status)" + (code.map { " (\($0)" + (message.map { ": \($0)" } ?? "") + ")" } ?? "")
        switch status {
        case 401:
            return AppStoreAPIError(.unauthorized, described + "; check the api-key file, key id, issuer id and bundle id",
                                    status: status, errorCode: code)
        case 429:
            let retryAt = headers["Retry-After"].flatMap { Int64($0.trimmingCharacters(in: " \t")) }
            return AppStoreAPIError(.rateLimited, described, status: status, errorCode: code, retryAt: retryAt)
        default:
            return AppStoreAPIError(.api, described, status: status, errorCode: code)
        }
    }

    /// `path` under `base`, whose own path (a proxy's prefix) is kept and whose query is not.
    static func url(_ base: HTTPURL, _ path: String) -> HTTPURL {
        var prefix = base.pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        while prefix.hasSuffix("/") { prefix = prefix.dropLast() }
        let scheme = base.scheme.rawValue + "://" + (base.hostKind == .ipv6 ? "[\(base.host)]" : base.host) + ":\(base.port)"
        return HTTPURL(scheme: base.scheme, host: base.host, hostKind: base.hostKind, port: base.port,
                       pathAndQuery: prefix + path, absoluteString: scheme + prefix + path)
    }

    /// Percent-encodes everything but RFC 3986's unreserved characters (tokens are base64).
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: out.unicodeScalars.append(Unicode.Scalar(byte))
            default: out += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return out
    }
}

private extension String {
    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
    func trimmingCharacters(in set: String) -> String {
        var text = Substring(self)
        while let first = text.first, set.contains(first) { text = text.dropFirst() }
        while let last = text.last, set.contains(last) { text = text.dropLast() }
        return String(text)
    }
}
