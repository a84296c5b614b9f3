import Dispatch
import Foundation
import Testing
import StoreRelayGooglePlay
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// Enrichment against the fake Google: retries of what may pass, none of what will not,
/// bounded by attempts and by age, cancellable, and never holding the caller.
@Suite(.serialized, .timeLimit(.minutes(2)),
       .enabled(if: CommandRunner.isAvailable("python3") && CommandRunner.isAvailable("openssl"), "python3 or openssl is not installed"))
struct PlayEnrichmentTests {
    static func quick(attempts: Int = 4) -> PlayEnrichment.Retries {
        var retries = PlayEnrichment.Retries()
        retries.attempts = attempts
        retries.firstBackoff = .milliseconds(20)
        retries.maximumBackoff = .milliseconds(50)
        return retries
    }

    static let subscription = PlayEnrichmentRequest(packageName: "com.acme.journal", kind: .subscription, purchaseToken: "sub-token-1")

    static func enrich(_ enrichment: PlayEnrichment, _ request: PlayEnrichmentRequest = subscription,
                       acceptedAt: Timestamp? = nil) -> PlayEnrichmentOutcome? {
        PlayDeveloperAPITests.wait { enrichment.enrich(request, acceptedAt: acceptedAt, completion: $0) }
    }

    @Test func retryableFailuresAreAskedAgainUntilAnAnswer() throws {
        let fake = try PlayDeveloperAPITests.fake([("script", [
            ["endpoint": "token", "status": 503], ["endpoint": "api", "status": 500], ["endpoint": "api", "status": 429, "retryAfter": 0],
        ])])
        let http = HTTPClient()
        defer { http.shutdown() }
        let enrichment = PlayEnrichment(api: try PlayDeveloperAPITests.api(fake, http: http), retries: Self.quick())
        let outcome = try #require(Self.enrich(enrichment))
        #expect(outcome.label == "test_purchase")
        #expect(outcome.attempts == 4)
        #expect(outcome.purchase?.resource == PlayDeveloperAPITests.subscription(test: true))
        #expect(fake.tokenRequests.map { $0["status"]?.int64Value } == [503, 200])
        #expect(fake.apiRequests.map { $0["status"]?.int64Value } == [500, 429, 200])
        #expect(enrichment.inProgress == 0)
    }

    @Test func aProductIsEnrichedAndARealPurchaseIsOK() throws {
        let fake = try PlayDeveloperAPITests.fake()
        let http = HTTPClient()
        defer { http.shutdown() }
        let enrichment = PlayEnrichment(api: try PlayDeveloperAPITests.api(fake, http: http), retries: Self.quick())
        let product = PlayEnrichmentRequest(packageName: "com.acme.journal", kind: .product, productId: "coins_100", purchaseToken: "prod-token-2")
        let outcome = try #require(Self.enrich(enrichment, product))
        #expect(outcome.label == "ok" && outcome.attempts == 1 && outcome.reason == nil)
        let noProduct = PlayEnrichmentRequest(packageName: "com.acme.journal", kind: .product, purchaseToken: "prod-token-2")
        let refused = try #require(Self.enrich(enrichment, noProduct))
        #expect(refused.label == "failed" && refused.reason == "rejected")
        #expect(fake.apiRequests.count == 1, "nothing asked without a product id")
    }

    @Test func permanentFailuresAreNotRetried() throws {
        let fake = try PlayDeveloperAPITests.fake([("script", [["endpoint": "api", "status": 403, "error": "PERMISSION_DENIED"]])])
        let http = HTTPClient()
        defer { http.shutdown() }
        let enrichment = PlayEnrichment(api: try PlayDeveloperAPITests.api(fake, http: http), retries: Self.quick())
        let denied = try #require(Self.enrich(enrichment))
        #expect(denied.label == "failed" && denied.reason == "rejected" && denied.attempts == 1)
        let unknown = try #require(Self.enrich(enrichment, PlayEnrichmentRequest(packageName: "com.acme.journal", kind: .subscription, purchaseToken: "gone")))
        #expect(unknown.reason == "rejected" && unknown.attempts == 1)
        #expect(fake.apiRequests.count == 2)
    }

    @Test func retriesStopAfterTheAttempts() throws {
        let fake = try PlayDeveloperAPITests.fake([("script", .array(Array(repeating: ["endpoint": "api", "status": 502] as JSONValue, count: 5)))])
        let http = HTTPClient()
        defer { http.shutdown() }
        let enrichment = PlayEnrichment(api: try PlayDeveloperAPITests.api(fake, http: http), retries: Self.quick(attempts: 3))
        let outcome = try #require(Self.enrich(enrichment))
        #expect(outcome.label == "failed" && outcome.reason == "server_error" && outcome.attempts == 3)
        #expect(fake.apiRequests.count == 3)
    }

    @Test func retriesStopOnceTheNotificationIsTooOld() throws {
        let fake = try PlayDeveloperAPITests.fake([("script", [["endpoint": "api", "status": 500], ["endpoint": "api", "status": 500]])])
        let http = HTTPClient()
        defer { http.shutdown() }
        var retries = Self.quick()
        retries.maximumAge = .seconds(600)
        let enrichment = PlayEnrichment(api: try PlayDeveloperAPITests.api(fake, http: http), retries: retries)
        // Recovered from the journal eleven minutes after it was accepted: one attempt, no retry.
        let old = Timestamp.now().advanced(by: .seconds(-660))
        let outcome = try #require(Self.enrich(enrichment, acceptedAt: old))
        #expect(outcome.label == "failed" && outcome.attempts == 1)
        #expect(fake.apiRequests.count == 1)
    }

    @Test func enrichReturnsAtOnceAndCancelEndsWaits() throws {
        let fake = try PlayDeveloperAPITests.fake([("script", [["endpoint": "api", "status": 500]])])
        let http = HTTPClient()
        defer { http.shutdown() }
        var retries = Self.quick()
        // Far longer than the test may take: only cancel() can end this wait.
        retries.firstBackoff = .seconds(600)
        retries.maximumBackoff = .seconds(600)
        retries.maximumAge = .seconds(3600)
        let enrichment = PlayEnrichment(api: try PlayDeveloperAPITests.api(fake, http: http), retries: retries)
        let outcome = Locked<PlayEnrichmentOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        enrichment.enrich(Self.subscription) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        // Returned before Google was even asked: the caller is never held.
        #expect(enrichment.inProgress == 1)
        #expect(fake.waitFor { $0.contains { $0["endpoint"]?.stringValue == "api" } })
        #expect(done.wait(timeout: .now() + .milliseconds(300)) == .timedOut, "waiting for its retry")
        enrichment.cancel()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(outcome.current?.reason == "cancelled")
        #expect(enrichment.inProgress == 0)
        let later = try #require(Self.enrich(enrichment))
        #expect(later.reason == "cancelled" && later.attempts == 0)
        #expect(fake.apiRequests.count == 1)
    }
}
