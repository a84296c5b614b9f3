import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayCore
import StoreRelayTestSupport

/// Counts every attempt outcome the engine reports, as `storerelay_deliveries_total` does.
final class RecordingObserver: DeliveryObserver {
    let outcomes = Locked<[String: Int]>([:])
    func attemptFinished(destination: String, outcome: String, seconds: Double) {
        outcomes.withLock { $0[outcome, default: 0] += 1 }
    }
    func deadLettered(destination: String?, reason: DeadLetter.Reason) {}
}

/// An event whose header-bound fields no HTTP request can carry (issue 25, point 5): it is
/// dead-lettered at once, and the destination's breaker never hears of it.
@Suite(.serialized) struct PoisonEventTests {
    @Test func anUnsendableEventIsRejectedAtOnceAndSparesTheBreaker() throws {
        let sink = try WebhookSink()
        let observer = RecordingObserver()
        // A long backoff: had the poison counted as failures, five would open the breaker and
        // hold the genuine event back for longer than the test waits.
        let harness = try ParkingHarness(routes: """
            destination hook webhook \(sink.url("/ok")) {
                backoff 30s 30s
                concurrency 1
            }
            """, whole: 16, observer: observer)
        defer { harness.stop() }
        _ = try harness.accept(6, destinations: ["hook"], typeJSON: #"DID_RENEW\r\nX-Injected: 1"#, prefix: "poison-")
        let genuine = try harness.accept(1, destinations: ["hook"], prefix: "genuine-")
        // The sink has the request before the engine has its answer: wait for the outcome too.
        #expect(pollUntil(timeout: 10) {
            sink.requests.count == 1 && harness.engine.deadLetters.count == 6 && observer.outcomes.current["delivered"] == 1
        })
        #expect(sink.requests.first?["headers"]?["webhook-id"]?.stringValue == genuine[0].id)
        let letters = harness.engine.deadLetters.list().items
        #expect(letters.allSatisfy { $0.reason == .rejected && $0.attempts.count == 1 })
        #expect(letters.allSatisfy {
            $0.detail == "the event's type holds a control character, which HTTP forbids in its StoreRelay-Type header; "
                + "it cannot be sent, however often it is tried"
        })
        #expect(harness.engine.status.first?.breaker == .closed)
        #expect(observer.outcomes.current == ["rejected": 6, "delivered": 1])
    }

    /// Every attempt is counted once, the last of an exhausted delivery included (it used to
    /// be missing: seven attempts showed six).
    @Test func theLastAttemptOfAnExhaustedDeliveryIsCounted() throws {
        let observer = RecordingObserver()
        let harness = try ParkingHarness(routes: """
            destination hook webhook http://127.0.0.1:1/down {
                backoff 20ms 20ms
                max-attempts 4
            }
            """, whole: 16, observer: observer)
        defer { harness.stop() }
        _ = try harness.accept(1, destinations: ["hook"])
        #expect(pollUntil(timeout: 10) { harness.engine.deadLetters.count == 1 })
        #expect(harness.engine.deadLetters.list().items.first?.attempts.count == 4)
        #expect(observer.outcomes.current == ["retry": 3, "exhausted": 1])
    }
}
