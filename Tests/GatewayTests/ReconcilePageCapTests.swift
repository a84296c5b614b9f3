import Dispatch
import Testing
@testable import StoreRelayGateway
import StoreRelayAppStoreAPI
import StoreRelayConfig
import StoreRelayDelivery
import StoreRelayVerification
import StoreRelayCrypto
import StoreRelayNet
import StoreRelayCore
import StoreRelayTestSupport

/// Issue 25, point 9: a pass that Apple (or whatever answers in its place) keeps telling
/// `hasMore` stops after a bounded number of pages or a bounded time, and is reported failed
/// with its checkpoint where it was. A real `Reconciler` in this process, asking a loopback
/// server over plain HTTP that answers every history request with an empty page and a token.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ReconcilePageCapTests {
    /// Apple as the pass sees it. `onPage` runs as each page is asked for (a test moves its
    /// clock there); after `givesUpAfter` pages it says there is no more, so a build without
    /// the cap ends the pass as a success rather than looping until the time limit.
    final class EndlessHistory: Sendable {
        let server: HTTPServer
        let port: Int
        let pages = Locked(0)

        init(givesUpAfter limit: Int = 200, onPage: @escaping @Sendable () -> Void = {}) throws {
            let pages = pages
            server = HTTPServer(configuration: HTTPServerConfiguration(address: "127.0.0.1:0")) { request, responder in
                let page = pages.withLock { count -> Int in
                    count += 1
                    return count
                }
                onPage()
                let more = page < limit
                let body = #"{"notificationHistory":[],"hasMore":\#(more),"paginationToken":"page-\#(page)"}"#
                responder.respond(HTTPResponse(status: 200, contentType: "application/json", body: body))
            }
            port = try server.start()
        }

        deinit { server.shutdown() }
    }

    /// Stores nothing; a pass over empty pages never asks it to.
    struct NoStore: NotificationStore {
        func store(_ notification: StoredNotification, completion: @escaping @Sendable (StoreOutcome) -> Void) { completion(.failed("no store")) }
        func contains(id: String, completion: @escaping @Sendable (Bool?) -> Void) { completion(nil) }
        var isWritable: Bool { true }
        var notWritableMessage: String { "" }
        var unavailableReason: String { "" }
        var dedupeWindow: Duration { .seconds(30 * 86_400) }
        var maxRecordBytes: Int { 1 << 20 }
        func takeLease(_ name: String, for duration: Duration, completion: @escaping @Sendable (Bool) -> Void) { completion(true) }
    }

    func reconciler(_ fake: EndlessHistory, clock: ManualClock, limits: ReconcileLimits) throws -> (Reconciler, String) {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-reconcile-cap").path
        let credentials = APICredentials(keyId: "ABC123DEFG", issuerId: "57246542-96fe-1a63-e053-0824d011072a",
                                         bundleId: "com.acme.journal", key: try P256PrivateKey.generate())
        let api = try AppStoreServerAPI(credentials: credentials, environment: .production,
                                        baseURL: try HTTPURL.parse("http://127.0.0.1:\(fake.port)"), http: HTTPClient(), clock: clock)
        let configuration = GatewayConfiguration()
        let processor = NotificationProcessor(verifier: try NotificationVerifier(), policy: AcceptancePolicy(configuration),
                                              routes: configuration.routes)
        let metrics = GatewayMetrics()
        let intake = NotificationIntake(processor: processor, store: NoStore(), clock: clock, logger: .disabled, metrics: metrics)
        let reconciler = Reconciler(
            bundleId: "com.acme.journal", environment: .production, api: api, schedule: nil,
            record: ReconcileRecord(bundleId: "com.acme.journal", environment: .production), directory: directory, intake: intake,
            store: NoStore(), dedupeWindow: configuration.dedupeWindow, clock: clock, logger: .disabled, metrics: metrics, limits: limits)
        return (reconciler, directory)
    }

    func pass(_ reconciler: Reconciler) -> ReconcileReport {
        let report = Locked<ReconcileReport?>(nil)
        let done = DispatchSemaphore(value: 0)
        reconciler.reconcile(ReconcileRequest(since: .seconds(3600))) { finished in
            report.withLock { $0 = finished }
            done.signal()
        }
        done.wait()
        return report.current!
    }

    @Test func aPassStopsAfterTheMostPagesAndFails() throws {
        let fake = try EndlessHistory()
        let clock = ManualClock()
        let (reconciler, directory) = try reconciler(fake, clock: clock, limits: ReconcileLimits(maximumPages: 5, maximumDuration: .seconds(3600)))
        let report = pass(reconciler)
        #expect(report.outcome == .failed)
        #expect(report.pages == 5 && fake.pages.current == 5)
        let error = report.error ?? ""
        #expect(error.hasPrefix("Apple kept answering hasMore: stopped after 5 pages"), "\(error)")
        #expect(error.contains("at most 5 pages or 1h a pass"), "\(error)")
        // Failed: nothing says the window was fetched.
        guard case .missing = ReconcileCheckpoint(directory: directory, bundleId: "com.acme.journal", environment: .production).load() else {
            Issue.record("a failed pass saved a checkpoint")
            return
        }
        #expect(reconciler.record.lastPass.current?.outcome == .failed)
    }

    @Test func aPassStopsAfterTheLongestTimeAndFails() throws {
        let clock = ManualClock()
        // Each page takes four minutes, as far as the pass's clock can tell.
        let fake = try EndlessHistory { clock.advance(by: .seconds(240)) }
        let (reconciler, _) = try reconciler(fake, clock: clock, limits: ReconcileLimits(maximumPages: 1_000, maximumDuration: .seconds(600)))
        let report = pass(reconciler)
        #expect(report.outcome == .failed)
        #expect(report.pages == 3, "12 minutes had passed after the third page")
        #expect(report.error?.contains("stopped after 3 pages in 12m (at most 1000 pages or 10m a pass)") == true, "\(report.error ?? "")")
    }

    /// The production bounds: generous enough for the longest window Apple keeps.
    @Test func theDefaultBoundsCoverAppleHistory() {
        let limits = ReconcileLimits()
        // 180 days of an app receiving 10,000 notifications a day, 20 to a page.
        #expect(limits.maximumPages * 20 >= 180 * 10_000)
        #expect(limits.maximumDuration <= .seconds(24 * 3600))
    }
}
