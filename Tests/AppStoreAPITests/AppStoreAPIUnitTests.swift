import Foundation
import Testing
@testable import StoreRelayAppStoreAPI
import StoreRelayCrypto
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// The client's pieces without a network: tokens, Apple's error answers, pages, URLs, keys.
/// `ReconcileTests` (EndToEndTests) drives them against the fake API over HTTPS.
@Suite struct AppStoreAPIUnitTests {
    static func credentials() throws -> (APICredentials, PublicKey) {
        let key = try P256PrivateKey.generate()
        return (APICredentials(keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a", bundleId: "com.acme.journal", key: key),
                try key.publicKey())
    }

    /// The token is Apple's shape, signed with the key, and renewed before it runs out.
    @Test func tokensAreApplesShapeAndRenewedEarly() throws {
        let (credentials, publicKey) = try Self.credentials()
        let clock = ManualClock()
        let source = APITokenSource(credentials: credentials, clock: clock)
        let token = try source.token()
        let parts = token.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONValue.parse(try #require(Base64.urlDecode(parts[0])))
        let claims = try JSONValue.parse(try #require(Base64.urlDecode(parts[1])))
        #expect(header == ["alg": "ES256", "kid": "ABC123DEFG", "typ": "JWT"])
        let now = clock.now().milliseconds / 1000
        #expect(claims["iss"]?.stringValue == credentials.issuerId)
        #expect(claims["aud"]?.stringValue == "appstoreconnect-v1")
        #expect(claims["bid"]?.stringValue == "com.acme.journal")
        #expect(claims["iat"]?.int64Value == now)
        #expect(claims["exp"]?.int64Value == now + 1200)
        let signature = try #require(Base64.urlDecode(parts[2]))
        #expect(signature.count == 64)
        #expect(publicKey.isValidES256Signature(signature, for: Array((parts[0] + "." + parts[1]).utf8)))

        // Reused while more than five minutes remain, then replaced.
        clock.advance(by: .seconds(14 * 60))
        #expect(try source.token() == token)
        clock.advance(by: .seconds(2 * 60))
        let renewed = try source.token()
        #expect(renewed != token)
        let renewedClaims = try JSONValue.parse(try #require(Base64.urlDecode(renewed.split(separator: ".")[1])))
        #expect(renewedClaims["iat"]?.int64Value == now + 16 * 60)
    }

    /// Apple's error answers become typed errors: 401, 429 with its millisecond Retry-After,
    /// the pagination token's expiry, and what may be retried.
    @Test func applesErrorAnswersAreTyped() {
        func error(_ status: Int, _ body: String?, headers: HTTPHeaders = HTTPHeaders()) -> AppStoreAPIError {
            AppStoreServerAPI.error(status: status, json: body.flatMap { try? JSONValue.parse($0) }, headers: headers, what: "POST /x")
        }
        let unauthorized = error(401, nil)
        #expect(unauthorized.kind == .unauthorized && !unauthorized.isRetryable)
        #expect(unauthorized.message.contains("api-key"))

        let limited = error(429, #"{"errorCode":4290000,"errorMessage":"Rate limit exceeded."}"#,
                            headers: HTTPHeaders([("Retry-After", "1800000000123")]))
        #expect(limited.kind == .rateLimited)
        #expect(limited.retryAt == 1_800_000_000_123)
        #expect(error(429, nil, headers: HTTPHeaders([("Retry-After", "soon")])).retryAt == nil)

        let expired = error(400, #"{"errorCode":4000017,"errorMessage":"Pagination token expired."}"#)
        #expect(expired.isPaginationTokenExpired && !expired.isRetryable)
        #expect(expired.message.contains("4000017: Pagination token expired."))
        for code in [4040002, 4040004, 4040006, 5000001] {
            #expect(error(code >= 5000000 ? 500 : 404, #"{"errorCode":\#(code),"errorMessage":"x"}"#).isRetryable, "\(code)")
        }
        // Every 5xx is retried, Apple's non-retryable internal error included (the SPEC says so).
        #expect(error(500, #"{"errorCode":5000000,"errorMessage":"x"}"#).isRetryable)
        #expect(error(502, "<html>bad gateway</html>").isRetryable)
        #expect(!error(404, #"{"errorCode":4040010,"errorMessage":"x"}"#).isRetryable)
        #expect(AppStoreAPIError(.transport, "reset").isRetryable)
    }

    /// A 429 waits until Apple's Retry-After (UNIX milliseconds), honours a proxy's
    /// delta-seconds, and never waits less than a second.
    @Test func rateLimitWaits() {
        let now: Int64 = 1_800_000_000_000
        #expect(AppStoreServerAPI.rateLimitWait(retryAt: now + 4_500, now: now) == .milliseconds(4_500))
        #expect(AppStoreServerAPI.rateLimitWait(retryAt: 30, now: now) == .seconds(30))
        #expect(AppStoreServerAPI.rateLimitWait(retryAt: nil, now: now) == .seconds(1))
        #expect(AppStoreServerAPI.rateLimitWait(retryAt: now - 5_000, now: now) == .seconds(1))
        #expect(AppStoreServerAPI.rateLimitWait(retryAt: 0, now: now) == .seconds(1))
    }

    @Test func historyPagesAreReadStrictly() throws {
        let page = try NotificationHistoryPage(json: JSONValue.parse("""
            {"notificationHistory":[{"signedPayload":"a.b.c","sendAttempts":[{"attemptDate":1698148900000,"sendAttemptResult":"TLS_ISSUE"},
            {"attemptDate":1698148950000,"sendAttemptResult":"SUCCESS"}]}],"hasMore":true,"paginationToken":"t0k"}
            """))
        #expect(page.items.count == 1 && page.hasMore && page.paginationToken == "t0k")
        #expect(page.items[0].sendAttempts.map(\.result) == ["TLS_ISSUE", "SUCCESS"])
        #expect(page.items[0].sendAttempts[0].attemptDate == 1_698_148_900_000)
        let last = try NotificationHistoryPage(json: JSONValue.parse(#"{"notificationHistory":[],"hasMore":false}"#))
        #expect(last.items.isEmpty && !last.hasMore)
        for bad in [
            #"{"hasMore":false}"#,
            #"{"notificationHistory":[{"sendAttempts":[]}],"hasMore":false}"#,
            #"{"notificationHistory":[{"signedPayload":""}],"hasMore":false}"#,
            #"{"notificationHistory":[],"hasMore":true}"#,
        ] {
            #expect(throws: AppStoreAPIError.self, "\(bad)") { try NotificationHistoryPage(json: JSONValue.parse(bad)) }
        }
        #expect(NotificationHistoryQuery(startDate: 1, endDate: 2).body == Array(#"{"startDate":1,"endDate":2}"#.utf8))
        #expect(NotificationHistoryQuery(startDate: 1, endDate: 2, onlyFailures: true).body
                == Array(#"{"startDate":1,"endDate":2,"onlyFailures":true}"#.utf8))
    }

    @Test func urlsKeepAProxysPrefixAndEncodeTokens() throws {
        let plain = AppStoreServerAPI.url(try HTTPURL("https://api.storekit.apple.com"), "/inApps/v1/notifications/history")
        #expect(plain.pathAndQuery == "/inApps/v1/notifications/history")
        #expect(plain.host == "api.storekit.apple.com" && plain.port == 443)
        let proxied = AppStoreServerAPI.url(try HTTPURL("https://proxy.example:8443/apple/?x=1"), "/inApps/v1/notifications/test")
        #expect(proxied.pathAndQuery == "/apple/inApps/v1/notifications/test")
        #expect(AppStoreServerAPI.percentEncoded("a+b/c=d_e.f~g-h") == "a%2Bb%2Fc%3Dd_e.f~g-h")
    }

    @Test func keyFilesAreCheckedWhenLoaded() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-api-key")
        let good = directory.appendingPathComponent("good.p8").path
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", good], check: true)
        let loaded = try APICredentials.load(keyFile: good, keyId: "ABC123DEFG", issuerId: "i", bundleId: "b")
        #expect(loaded.keyId == "ABC123DEFG")

        let rsa = directory.appendingPathComponent("rsa.p8").path
        try CommandRunner.run("openssl", ["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048", "-out", rsa], check: true)
        let garbage = directory.appendingPathComponent("garbage.p8").path
        try "not a key".write(toFile: garbage, atomically: true, encoding: .utf8)
        for (path, fragment) in [(rsa, "not an In-App Purchase key"), (garbage, "not an In-App Purchase key"),
                                 (directory.appendingPathComponent("missing.p8").path, "cannot read")] {
            do {
                _ = try APICredentials.load(keyFile: path, keyId: "ABC123DEFG", issuerId: "i", bundleId: "b")
                Issue.record("\(path) was accepted")
            } catch {
                #expect(error.kind == .configuration && error.message.contains(fragment) && error.message.contains(path), "\(error)")
            }
        }
    }
}
