import Foundation
import Testing
import StoreRelayCore
import StoreRelayTestSupport

/// `rate 10/s` end to end (SPEC "Delivery controls"): 60 events, each failing once, to a
/// recording sink; the limit is read from the sink's own arrival times.
@Suite("Rate limit end to end", .serialized)
struct RateLimitEndToEndTests {
    let signer: NotificationSigner
    init() throws { signer = try NotificationSigner(authority: TestCertificateAuthority()) }

    /// The most arrivals in any window of `width` seconds starting at an arrival.
    private func busiestWindow(_ arrivals: [Double], width: Double) -> Int {
        let sorted = arrivals.sorted()
        return sorted.indices.map { i in sorted[i...].prefix { $0 < sorted[i] + width }.count }.max() ?? 0
    }

    /// 120 attempts (60 first tries answered 503, then 60 retries) at `rate 10/s` with
    /// `concurrency 8`: every one-second window of arrivals holds at most 10 + the burst of 1,
    /// plus 2 for timer and loopback jitter (an attempt that starts or arrives late next to
    /// one that did not, on two shared cores). Without the limit the whole run takes well
    /// under a second, all 120 in one window.
    @Test func attemptsRetriesIncludedStayWithinTheRate() throws {
        let sink = try WebhookSink(secret: testSigningSecret)
        let directory = try Gateway.directory(trusting: signer.authority, "storerelay-rate")
        let gateway = try Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            \(webhookDestination("paced", sink.url("/flaky/1"), options: "rate 10/s\nconcurrency 8"))
            route * * * -> paced
            """), directory: directory)
        var ids: Set<String> = []
        for _ in 0..<60 {
            let uuid = UUID().uuidString.lowercased()
            ids.insert(uuid)
            #expect(try gateway.post(json: try signer.body(uuid: uuid)).status == 200)
        }
        #expect(sink.waitFor(timeout: 60) { $0.count >= 120 }, "\(sink.requests.count) of 120 attempts arrived")
        Thread.sleep(forTimeInterval: 0.5)
        let requests = sink.requests
        #expect(requests.count == 120, "each event once failed and once delivered")
        let delivered = requests.filter { $0["count"]?.int64Value == 2 }.compactMap { $0["headers"]?["webhook-id"]?.stringValue }
        #expect(Set(delivered) == ids && delivered.count == 60)
        let arrivals = requests.compactMap { $0["at"]?.doubleValue }
        let busiest = busiestWindow(arrivals, width: 1)
        #expect(busiest <= 13, "at most 10/s + burst 1 + jitter 2 in any second; saw \(busiest)")
        let span = (arrivals.max() ?? 0) - (arrivals.min() ?? 0)
        #expect(span >= 10, "120 attempts at 10/s take about 12 s; took \(span) s")
        #expect(gateway.deadLetters.isEmpty)
    }

    /// The same limit in cluster mode, where the runner's bucket paces the entries each read
    /// takes from the shared stream: 30 events, each failing once, at `rate 10/s`.
    @Test(.enabled(if: RedisServerProcess.isAvailable, "redis-server is not installed (apt-get install redis-server)"))
    func clusterModeKeepsTheSameRate() throws {
        let server = try RedisServerProcess()
        let sink = try WebhookSink(secret: testSigningSecret)
        let ca = try TestCertificateAuthority()
        let directory = try Gateway.directory(trusting: ca, "storerelay-rate-cluster")
        let gateway = try Gateway(config: Gateway.bareConfig("""
            trust-root ./test-root.pem
            cluster redis://127.0.0.1:\(server.port) {
                instance-id a
            }
            \(webhookDestination("paced", sink.url("/flaky/1"), options: "rate 10/s\nconcurrency 8"))
            route * * * -> paced
            """), directory: directory)
        for _ in 0..<30 {
            let uuid = UUID().uuidString.lowercased()
            #expect(try gateway.post(signedPayload: TestChainTests.notification(uuid: uuid, ca: ca, variant: .valid)).status == 200)
        }
        #expect(sink.waitFor(timeout: 60) { $0.count >= 60 }, "\(sink.requests.count) of 60 attempts arrived")
        let arrivals = sink.requests.compactMap { $0["at"]?.doubleValue }
        let busiest = busiestWindow(arrivals, width: 1)
        #expect(busiest <= 13, "at most 10/s + burst 1 + jitter 2 in any second; saw \(busiest)")
        let span = (arrivals.max() ?? 0) - (arrivals.min() ?? 0)
        #expect(span >= 4.5, "60 attempts at 10/s take about 6 s; took \(span) s")
        gateway.process.send(SIGTERM)
        #expect(gateway.process.waitForExit() == 0)
    }
}
