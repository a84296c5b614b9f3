import Dispatch
import Foundation
@testable import StoreRelayCluster
import StoreRelayConfig
import StoreRelayCore
@testable import StoreRelayGateway
import StoreRelayTestSupport
import Testing

/// Review point 6: the recovery after a loss of the cluster server's data ran once; a pass
/// that failed (Apple unreachable, a 401) was never tried again, and the loss is not noticed
/// a second time. Now it is retried with backoff, from the same moment, until it succeeds.
@Suite struct ServerResetsRetryTests {
    let reset = ClusterEpoch.Reset(cause: .missing, previousEpoch: "a", epoch: "b", lostSince: Timestamp(milliseconds: 1_700_000_000_000),
                                   noticedAt: Timestamp(milliseconds: 1_700_000_060_000))

    /// The passes asked for, and what each answers: failed until `failures` ran.
    final class Apple: Sendable {
        let asked = Locked<[Int64]>([])
        let failures: Int
        init(failures: Int) { self.failures = failures }

        func pass(_ app: String, _ environment: String, _ from: Int64, _ done: @escaping @Sendable (ReconcileReport) -> Void) -> Bool {
            let count = asked.withLock { asked -> Int in
                asked.append(from)
                return asked.count
            }
            var report = ReconcileReport(startedAt: .now())
            if count <= failures {
                report.outcome = .failed
                report.error = "Apple answered 401"
            }
            DispatchQueue.global().async { [report] in done(report) }
            return true
        }
    }

    /// The first recovery's status, as `/api/status` shows it.
    func recovery(_ resets: ServerResets) -> JSONValue? {
        resets.json.arrayValue?.first?["recovery"]?.arrayValue?.first
    }

    func resets() -> ServerResets {
        ServerResets(logger: .disabled, metrics: GatewayMetrics(), retryDelays: (.milliseconds(20), .milliseconds(80)))
    }

    @Test func aFailedRecoveryIsRetriedFromTheSameMomentUntilItSucceeds() throws {
        let apple = Apple(failures: 3)
        let resets = resets()
        let configuration = try GatewayConfiguration.parse(text: "")
        resets.handle(reset, recovering: [.init(app: "com.acme.journal", environment: "production", from: 1_699_996_400_000)],
                      configuration: configuration, pass: apple.pass)
        #expect(pollUntil(timeout: 5) { recovery(resets)?["outcome"]?.stringValue == "success" }, "\(resets.json)")
        #expect(apple.asked.current == Array(repeating: 1_699_996_400_000, count: 4), "\(apple.asked.current)")
        #expect(recovery(resets)?["attempts"]?.int64Value == 4)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(apple.asked.current.count == 4, "nothing after the success")
    }

    /// While a pass fails the status says when the next one runs; stopped, none does.
    @Test func stoppingEndsTheRetries() throws {
        let apple = Apple(failures: .max)
        let resets = resets()
        resets.handle(reset, recovering: [.init(app: "com.acme.journal", environment: "sandbox", from: 1)],
                      configuration: try GatewayConfiguration.parse(text: ""), pass: apple.pass)
        #expect(pollUntil(timeout: 5) { apple.asked.current.count >= 2 })
        #expect(pollUntil(timeout: 5) { recovery(resets)?["nextAttemptAt"]?.stringValue != nil })
        #expect(recovery(resets)?["outcome"]?.stringValue == "failed")
        resets.stop()
        Thread.sleep(forTimeInterval: 0.2)
        let asked = apple.asked.current.count
        Thread.sleep(forTimeInterval: 0.3)
        #expect(apple.asked.current.count == asked)
    }
}
