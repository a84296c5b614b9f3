import Dispatch
import Foundation
import Testing
import StoreRelayGooglePlay
import StoreRelayNet
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// The token flow and both purchase calls against a fake Google over HTTPS on loopback
/// (`FakeGooglePlayAPI`), which checks every assertion's signature with the openssl tool.
@Suite(.serialized, .timeLimit(.minutes(2)),
       .enabled(if: CommandRunner.isAvailable("python3") && CommandRunner.isAvailable("openssl"), "python3 or openssl is not installed"))
struct PlayDeveloperAPITests {
    static let package = "com.acme.journal"

    /// A Google with one subscription (a test purchase) and two one-time products.
    static func fake(_ extra: [(String, JSONValue)] = []) throws -> FakeGooglePlayAPI {
        let fake = try FakeGooglePlayAPI()
        try fake.control(.object(JSONObject([
            ("subscriptions", .object(JSONObject([
                ("sub-token-1", subscription(test: true)), ("sub-token-2", subscription(test: false)),
                ("a/b+c=d%e f", subscription(test: false)),
            ]))),
            ("products", ["coins_100/prod-token-1": ["kind": "androidpublisher#productPurchase", "purchaseState": 0, "purchaseType": 0],
                          "coins_100/prod-token-2": ["kind": "androidpublisher#productPurchase", "purchaseState": 0, "orderId": "GPA.3312-4555-0192-88317"]]),
        ] + extra.map { (key: $0.0, value: $0.1) })))
        return fake
    }

    static func subscription(test: Bool) -> JSONValue {
        var members: [JSONObject.Member] = [
            ("kind", "androidpublisher#subscriptionPurchaseV2"), ("regionCode", "US"),
            ("lineItems", [["productId": "premium_monthly", "expiryTime": "2026-12-27T01:00:00.123Z"]]),
            ("startTime", "2026-11-27T01:00:00.123Z"), ("subscriptionState", "SUBSCRIPTION_STATE_ACTIVE"),
            ("latestOrderId", "GPA.3392-1129-4468-76121"), ("acknowledgementState", "ACKNOWLEDGEMENT_STATE_ACKNOWLEDGED"),
        ]
        if test { members.append(("testPurchase", .object(JSONObject()))) }
        return .object(JSONObject(members))
    }

    static func api(_ fake: FakeGooglePlayAPI, http: HTTPClient, clock: any TimeSource = WallClock(),
                    timeout: Duration = .seconds(20), maxAnswerBytes: Int = PlayDeveloperAPI.defaultMaxAnswerBytes) throws -> PlayDeveloperAPI {
        try PlayDeveloperAPI(account: ServiceAccount.load(fake.serviceAccountFile), baseURL: try HTTPURL.parse(fake.url),
                             caFile: fake.caFile, http: http, clock: clock, timeout: timeout, maxAnswerBytes: maxAnswerBytes)
    }

    /// Waits (bounded) for a completion-style call.
    static func wait<T: Sendable>(_ call: (@escaping @Sendable (T) -> Void) -> Void) -> T? {
        let box = Locked<T?>(nil)
        let done = DispatchSemaphore(value: 0)
        call { value in
            box.withLock { $0 = value }
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success else { return nil }
        return box.current
    }

    static func subscription(_ api: PlayDeveloperAPI, _ token: String = "sub-token-1") -> Result<PlayPurchase, PlayAPIError>? {
        wait { api.subscription(packageName: package, purchaseToken: token, completion: $0) }
    }

    @Test func aSubscriptionIsFetchedWholeAndItsTestMarkerRead() throws {
        let fake = try Self.fake()
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http)
        let test = try #require(Self.subscription(api)).get()
        #expect(test.isTestPurchase)
        #expect(test.resource == Self.subscription(test: true))
        #expect(test.resource.objectValue?.keys == Self.subscription(test: true).objectValue?.keys, "Google's member order is kept")
        #expect(test.resource.serialized() == Self.subscription(test: true).serialized())
        let real = try #require(Self.subscription(api, "sub-token-2")).get()
        #expect(!real.isTestPurchase)
        let request = try #require(fake.apiRequests.first)
        #expect(request["rawPath"]?.stringValue == "/androidpublisher/v3/applications/com.acme.journal/purchases/subscriptionsv2/tokens/sub-token-1")
        #expect(request["token"]?.stringValue == fake.tokenRequests.first?["issued"]?.stringValue)
        #expect(fake.tokenRequests.first?["error"] == .null, "the fake verified the assertion")
        #expect(fake.tokenRequests.first?["contentType"]?.stringValue == "application/x-www-form-urlencoded")
    }

    @Test func aProductPurchaseIsFetchedAndPurchaseTypeZeroIsATest() throws {
        let fake = try Self.fake()
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http)
        let test = try #require(Self.wait { api.product(packageName: Self.package, productId: "coins_100", purchaseToken: "prod-token-1", completion: $0) }).get()
        #expect(test.isTestPurchase)
        let real = try #require(Self.wait { api.product(packageName: Self.package, productId: "coins_100", purchaseToken: "prod-token-2", completion: $0) }).get()
        #expect(!real.isTestPurchase)
        #expect(real.resource["orderId"]?.stringValue == "GPA.3312-4555-0192-88317")
        #expect(fake.apiRequests.first?["rawPath"]?.stringValue
                == "/androidpublisher/v3/applications/com.acme.journal/purchases/products/coins_100/tokens/prod-token-1")
        #expect(fake.tokenRequests.count == 1, "one token for both calls")
    }

    @Test func purchaseTokensArePercentEncodedInThePath() throws {
        let fake = try Self.fake()
        let http = HTTPClient()
        defer { http.shutdown() }
        let purchase = try #require(Self.subscription(try Self.api(fake, http: http), "a/b+c=d%e f")).get()
        #expect(!purchase.isTestPurchase)
        let request = try #require(fake.apiRequests.first)
        #expect(request["rawPath"]?.stringValue?.hasSuffix("/tokens/a%2Fb%2Bc%3Dd%25e%20f") == true)
        #expect(request["segments"]?.arrayValue?.last?.stringValue == "a/b+c=d%e f")
    }

    @Test func theTokenIsCachedUntilFiveMinutesBeforeItExpires() throws {
        let fake = try Self.fake([("allowFutureSeconds", 7200)])
        let http = HTTPClient()
        defer { http.shutdown() }
        let clock = ManualClock(Timestamp.now())
        let api = try Self.api(fake, http: http, clock: clock)
        _ = try #require(Self.subscription(api)).get()
        clock.advance(by: .seconds(50 * 60))
        _ = try #require(Self.subscription(api)).get()
        #expect(fake.tokenRequests.count == 1, "54 minutes of a 60-minute token are left")
        // 3599 s from the request: at 55 min less than five minutes remain.
        clock.advance(by: .seconds(5 * 60))
        _ = try #require(Self.subscription(api)).get()
        #expect(fake.tokenRequests.count == 2)
        let tokens = fake.apiRequests.map { $0["token"]?.stringValue }
        #expect(tokens[0] == tokens[1] && tokens[1] != tokens[2])
    }

    @Test func callersWaitingForATokenShareOneRequest() throws {
        let fake = try Self.fake([("tokenDelayMs", 400)])
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http)
        let group = DispatchGroup()
        let results = Locked<[Result<PlayPurchase, PlayAPIError>]>([])
        for _ in 0..<12 {
            group.enter()
            api.subscription(packageName: Self.package, purchaseToken: "sub-token-2") { result in
                results.withLock { $0.append(result) }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(results.current.count == 12)
        #expect(results.current.allSatisfy { (try? $0.get()) != nil })
        #expect(fake.tokenRequests.count == 1)
        #expect(api.tokens.requestsSent == 1)
    }

    @Test func aRefusedTokenIsDroppedAndTheCallAskedOnceMore() throws {
        let fake = try Self.fake([("script", [["endpoint": "api", "revokeTokens": true]])])
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http)
        let purchase = try #require(Self.subscription(api)).get()
        #expect(purchase.isTestPurchase)
        #expect(fake.tokenRequests.count == 2)
        #expect(fake.apiRequests.map { $0["status"]?.int64Value } == [401, 200])
        // The fresh token stays cached.
        _ = try #require(Self.subscription(api)).get()
        #expect(fake.tokenRequests.count == 2)
    }

    @Test func aSecond401IsUnauthorizedNotALoop() throws {
        let fake = try Self.fake([("script", [["endpoint": "api", "status": 401, "error": "UNAUTHENTICATED"],
                                              ["endpoint": "api", "status": 401, "error": "UNAUTHENTICATED"]])])
        let http = HTTPClient()
        defer { http.shutdown() }
        guard case .failure(let error) = try #require(Self.subscription(try Self.api(fake, http: http))) else {
            Issue.record("two 401s gave a purchase")
            return
        }
        #expect(error.kind == .unauthorized && error.status == 401 && !error.isRetryable)
        #expect(fake.apiRequests.count == 2)
        #expect(fake.tokenRequests.count == 2)
    }

    @Test func everyErrorClassIsReported() throws {
        let fake = try Self.fake([("script", [
            ["endpoint": "api", "status": 500], ["endpoint": "api", "status": 503, "error": "UNAVAILABLE"],
            ["endpoint": "api", "status": 429, "retryAfter": 7, "error": "RESOURCE_EXHAUSTED"],
            ["endpoint": "api", "status": 403, "error": "PERMISSION_DENIED"], ["endpoint": "api", "status": 400, "error": "INVALID_ARGUMENT"],
        ])])
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http)
        func failure() -> PlayAPIError? {
            if case .failure(let error)? = Self.subscription(api) { return error }
            return nil
        }
        #expect(failure()?.kind == .server)
        #expect(failure()?.googleError == "UNAVAILABLE")
        let limited = failure()
        #expect(limited?.kind == .rateLimited && limited?.retryAfter == .seconds(7))
        let denied = failure()
        #expect(denied?.kind == .rejected && denied?.googleError == "PERMISSION_DENIED" && denied?.isRetryable == false)
        #expect(failure()?.kind == .rejected)
        guard case .failure(let unknown)? = Self.subscription(api, "never-issued") else { Issue.record("an unknown token was found"); return }
        #expect(unknown.kind == .rejected && unknown.status == 404 && unknown.googleError == "NOT_FOUND")
        #expect(!unknown.message.contains("never-issued"), "purchase tokens stay out of messages")
    }

    @Test func tokenEndpointFailuresAreClassified() throws {
        let fake = try Self.fake([("script", [["endpoint": "token", "status": 500], ["endpoint": "token", "status": 400, "error": "invalid_grant"]])])
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http)
        guard case .failure(let server)? = Self.subscription(api) else { Issue.record("a 500 gave a token"); return }
        #expect(server.kind == .server && server.isRetryable)
        guard case .failure(let refused)? = Self.subscription(api) else { Issue.record("invalid_grant gave a token"); return }
        #expect(refused.kind == .unauthorized && refused.googleError == "invalid_grant" && !refused.isRetryable)
        #expect(fake.apiRequests.isEmpty, "no API call without a token")
        _ = try #require(Self.subscription(api)).get()
    }

    @Test func anAssertionSignedWithAnotherKeyIsRefusedByGoogle() throws {
        let fake = try Self.fake()
        let http = HTTPClient()
        defer { http.shutdown() }
        let wrong = fake.directory.appendingPathComponent("wrong-sa.json").path
        try ServiceAccountFile.write(to: wrong, clientEmail: fake.clientEmail, privateKeyId: fake.privateKeyId,
                                     privateKeyPEM: try RSAPrivateKey.generate().pemString(), tokenURI: fake.tokenURI)
        let api = try PlayDeveloperAPI(account: ServiceAccount.load(wrong), baseURL: try HTTPURL.parse(fake.url), caFile: fake.caFile, http: http)
        guard case .failure(let error)? = Self.subscription(api) else { Issue.record("a forged assertion bought a token"); return }
        #expect(error.kind == .unauthorized && error.googleError == "invalid_grant")
        #expect(fake.tokenRequests.first?["error"]?.stringValue == "signature does not verify")
    }

    @Test func malformedAndHugeAnswersAreRefused() throws {
        let fake = try Self.fake([("script", [
            ["endpoint": "api", "raw": "not json"], ["endpoint": "api", "raw": "[1,2]"],
            ["endpoint": "api", "hugeBytes": 300_000], ["endpoint": "api", "hugeBytes": 3_000_000],
        ])])
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http)
        for what in ["not JSON", "an array", "over our cap", "over the client's cap"] {
            guard case .failure(let error)? = Self.subscription(api) else {
                Issue.record("\(what) was taken")
                continue
            }
            #expect(error.kind == .malformedResponse && !error.isRetryable, "\(what): \(error)")
        }
        _ = try #require(Self.subscription(api)).get()
    }

    @Test func aSlowAnswerTimesOutAsATransportFailure() throws {
        let fake = try Self.fake([("script", [["endpoint": "api", "delayMs": 3000]])])
        let http = HTTPClient()
        defer { http.shutdown() }
        let api = try Self.api(fake, http: http, timeout: .milliseconds(600))
        _ = try #require(Self.wait { api.tokens.token(completion: $0) }).get()
        guard case .failure(let error)? = Self.subscription(api) else { Issue.record("a late answer was waited for"); return }
        #expect(error.kind == .transport && error.isRetryable)
    }

    @Test func anUnreachableGoogleIsATransportFailure() throws {
        let listener = try LoopbackListener()
        let port = listener.port
        close(listener.fd)
        let fake = try Self.fake()
        let http = HTTPClient()
        defer { http.shutdown() }
        let unreachable = fake.directory.appendingPathComponent("closed-sa.json").path
        try ServiceAccountFile.write(to: unreachable, clientEmail: fake.clientEmail, privateKeyId: fake.privateKeyId,
                                     privateKeyPEM: fake.privateKeyPEM, tokenURI: "https://127.0.0.1:\(port)/token")
        let api = try PlayDeveloperAPI(account: ServiceAccount.load(unreachable), baseURL: try HTTPURL.parse(fake.url), caFile: fake.caFile, http: http)
        guard case .failure(let error)? = Self.subscription(api) else { Issue.record("a closed port gave a token"); return }
        #expect(error.kind == .transport && error.isRetryable)
    }
}
