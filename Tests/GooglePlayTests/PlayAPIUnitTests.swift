import Foundation
import Testing
@testable import StoreRelayGooglePlay
import StoreRelayNet
import StoreRelayCrypto
import StoreRelayCore
import StoreRelayTestSupport

/// The pieces of the token flow and the API client without I/O: the assertion, the token
/// answer, Google's error answers, percent-encoding, and the test-purchase markers.
@Suite struct PlayAPIUnitTests {
    static let key = try! RSAPrivateKey.generate()
    static let account = ServiceAccount(
        clientEmail: "relay@acme-prod.iam.gserviceaccount.com", privateKeyId: "k1d", tokenURI: try! HTTPURL.parse("https://oauth2.googleapis.com/token"),
        key: key)

    @Test func theAssertionIsWhatGoogleAsksFor() throws {
        let jwt = try GoogleAccessTokenSource.assertion(Self.account, issuedAt: 1_800_000_000)
        let parts = jwt.split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let header = try JSONValue.parse(Base64.urlDecode(parts[0])!)
        let claims = try JSONValue.parse(Base64.urlDecode(parts[1])!)
        #expect(header == ["alg": "RS256", "kid": "k1d", "typ": "JWT"])
        #expect(claims["iss"]?.stringValue == "relay@acme-prod.iam.gserviceaccount.com")
        #expect(claims["scope"]?.stringValue == "https://www.googleapis.com/auth/androidpublisher")
        #expect(claims["aud"]?.stringValue == "https://oauth2.googleapis.com/token")
        #expect(claims["iat"]?.int64Value == 1_800_000_000)
        #expect(claims["exp"]?.int64Value == 1_800_003_600)
        let signed = Array((parts[0] + "." + parts[1]).utf8)
        #expect(try Self.key.publicKey().isValidRS256Signature(Base64.urlDecode(parts[2])!, for: signed))
        #expect(try !RSAPrivateKey.generate().publicKey().isValidRS256Signature(Base64.urlDecode(parts[2])!, for: signed))
    }

    func tokenAnswer(_ body: String, status: Int = 200) -> Result<(String, Int64), PlayAPIError> {
        let response = HTTPResponse(status: status, contentType: "application/json", body: body)
        let classified = PlayHTTP.classify(.success(response), what: "POST token", maxBytes: 65536)
        return GoogleAccessTokenSource.parse(classified, what: "POST token", requestedAt: 1_000_000)
    }

    @Test func theTokenAnswerIsReadAndItsExpiryCountedFromTheRequest() throws {
        let (token, expires) = try tokenAnswer(#"{"access_token":"ya29.abc","expires_in":3599,"token_type":"Bearer"}"#).get()
        #expect(token == "ya29.abc")
        #expect(expires == 1_000_000 + 3_599_000)
    }

    @Test func badTokenAnswersAreMalformedAndRefusedCredentialsUnauthorized() {
        for body in [#"{"expires_in":3599}"#, #"{"access_token":"","expires_in":3599}"#, #"{"access_token":"a b","expires_in":3599}"#,
                     #"{"access_token":"ya29.x"}"#, #"{"access_token":"ya29.x","expires_in":-5}"#, #"{"access_token":"ya29.x","expires_in":"soon"}"#,
                     #"{"access_token":"ya29.x","expires_in":3599,"token_type":"mac"}"#, "[]", "nonsense"] {
            guard case .failure(let error) = tokenAnswer(body) else {
                Issue.record("\(body) was taken")
                continue
            }
            #expect(error.kind == .malformedResponse, "\(body): \(error)")
        }
        for grant in ["invalid_grant", "invalid_client", "unauthorized_client"] {
            guard case .failure(let error) = tokenAnswer(#"{"error":"\#(grant)","error_description":"Invalid JWT Signature."}"#, status: 400) else {
                Issue.record("\(grant) was taken")
                continue
            }
            #expect(error.kind == .unauthorized && error.googleError == grant && !error.isRetryable)
            #expect(error.message.contains("Invalid JWT Signature."))
        }
        guard case .failure(let other) = tokenAnswer(#"{"error":"invalid_request"}"#, status: 400) else { return }
        #expect(other.kind == .rejected)
    }

    @Test func googlesErrorAnswersAreClassified() {
        func error(_ status: Int, _ body: String = "", headers: [(String, String)] = []) -> PlayAPIError? {
            var response = HTTPResponse(status: status, contentType: "application/json", body: body)
            for (name, value) in headers { response.headers.add(name: name, value: value) }
            if case .failure(let error) = PlayHTTP.classify(.success(response), what: "GET", maxBytes: 1000) { return error }
            return nil
        }
        let notFound = error(404, #"{"error":{"code":404,"message":"The purchase token was not found.","status":"NOT_FOUND"}}"#)
        #expect(notFound?.kind == .rejected && notFound?.googleError == "NOT_FOUND" && notFound?.isRetryable == false)
        #expect(notFound?.message.contains("The purchase token was not found.") == true)
        #expect(error(403)?.kind == .rejected)
        #expect(error(410)?.kind == .rejected)
        #expect(error(401)?.kind == .unauthorized)
        for status in [408, 500, 502, 503] { #expect(error(status)?.kind == .server && error(status)?.isRetryable == true) }
        let limited = error(429, "{}", headers: [("Retry-After", "7")])
        #expect(limited?.kind == .rateLimited && limited?.retryAfter == .seconds(7) && limited?.isRetryable == true)
        #expect(error(429)?.retryAfter == nil)
        #expect(error(200, "[1]")?.kind == .malformedResponse)
        #expect(error(200, "{\"a\":")?.kind == .malformedResponse)
        #expect(error(200, "{\"a\":\"" + String(repeating: "x", count: 1000) + "\"}")?.kind == .malformedResponse)
        #expect(error(200, "{\"a\":1}") == nil)
        let transport = PlayHTTP.classify(.failure(HTTPClientError(.connect, "refused")), what: "GET", maxBytes: 10)
        if case .failure(let failure) = transport { #expect(failure.kind == .transport && failure.isRetryable) } else { Issue.record("taken") }
        let tooLarge = PlayHTTP.classify(.failure(HTTPClientError(.responseTooLarge, "big")), what: "GET", maxBytes: 10)
        if case .failure(let failure) = tooLarge { #expect(failure.kind == .malformedResponse && !failure.isRetryable) } else { Issue.record("taken") }
    }

    @Test func pathSegmentsArePercentEncoded() throws {
        #expect(PlayHTTP.percentEncoded("com.acme.journal") == "com.acme.journal")
        #expect(PlayHTTP.percentEncoded("a/b?c#d%e+f=g h&é") == "a%2Fb%3Fc%23d%25e%2Bf%3Dg%20h%26%C3%A9")
        #expect(PlayHTTP.percentEncoded("AZaz09-._~") == "AZaz09-._~")
        let base = try HTTPURL.parse("https://proxy.example:8443/google/?ignored=1")
        let url = PlayHTTP.url(base, "/androidpublisher/v3/x")
        #expect(url.pathAndQuery == "/google/androidpublisher/v3/x")
        #expect(url.absoluteString == "https://proxy.example:8443/google/androidpublisher/v3/x")
    }

    @Test func testPurchasesAreToldByGooglesMarkers() throws {
        #expect(PlayPurchase.subscription(try JSONValue.parse(#"{"kind":"androidpublisher#subscriptionPurchaseV2","testPurchase":{}}"#)).isTestPurchase)
        #expect(!PlayPurchase.subscription(try JSONValue.parse(#"{"kind":"androidpublisher#subscriptionPurchaseV2"}"#)).isTestPurchase)
        #expect(!PlayPurchase.subscription(try JSONValue.parse(#"{"testPurchase":null}"#)).isTestPurchase)
        #expect(PlayPurchase.product(try JSONValue.parse(#"{"purchaseType":0}"#)).isTestPurchase)
        #expect(!PlayPurchase.product(try JSONValue.parse(#"{"purchaseType":1}"#)).isTestPurchase)
        #expect(!PlayPurchase.product(try JSONValue.parse(#"{"purchaseState":0}"#)).isTestPurchase)
    }

    @Test func theAPIRefusesPlainHTTPBeyondLoopback() throws {
        let http = HTTPClient()
        defer { http.shutdown() }
        #expect(throws: PlayAPIError.self) {
            try PlayDeveloperAPI(account: Self.account, baseURL: try HTTPURL.parse("http://androidpublisher.example"), http: http)
        }
        _ = try PlayDeveloperAPI(account: Self.account, baseURL: try HTTPURL.parse("http://127.0.0.1:9"), http: http)
        _ = try PlayDeveloperAPI(account: Self.account, http: http)
    }

    @Test func theBackoffGrowsWithJitterAndStaysCapped() throws {
        var retries = PlayEnrichment.Retries()
        retries.firstBackoff = .seconds(1)
        retries.maximumBackoff = .seconds(8)
        let http = HTTPClient()
        defer { http.shutdown() }
        let enrichment = PlayEnrichment(api: try PlayDeveloperAPI(account: Self.account, http: http), retries: retries)
        var generator = SeededGenerator(seed: 7)
        for (failures, range) in [(1, 1000...1500), (2, 2000...3000), (3, 4000...6000), (4, 8000...8000), (30, 8000...8000)] {
            let wait = enrichment.backoff(afterFailures: failures, random: &generator).wholeMilliseconds
            #expect(range.contains(Int(wait)), "after \(failures) failures: \(wait) ms")
        }
    }
}
