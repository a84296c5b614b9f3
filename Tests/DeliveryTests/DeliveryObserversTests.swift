import Testing
@testable import StoreRelayDelivery
import StoreRelayCore

/// `DeliveryObservers` tells every observer every callback, each once, with its arguments.
@Suite struct DeliveryObserversTests {
    private final class Recorder: DeliveryObserver, @unchecked Sendable {
        let calls = Locked<[String]>([])
        func attemptFinished(destination: String, outcome: String, seconds: Double) { calls.withLock { $0.append("attempt \(destination) \(outcome)") } }
        func deadLettered(destination: String?, reason: DeadLetter.Reason) { calls.withLock { $0.append("dead \(destination ?? "-") \(reason.rawValue)") } }
        func entriesClaimed(destination: String, count: Int) { calls.withLock { $0.append("claimed \(destination) \(count)") } }
        func entriesLost(destination: String, count: Int) { calls.withLock { $0.append("lost \(destination) \(count)") } }
        func recordTampered(record: String) { calls.withLock { $0.append("tampered \(record)") } }
        func traced(_ span: TraceSpan) { calls.withLock { $0.append("span \(span.name)") } }
        func breakerChanged(destination: String, open: Bool, error: String?) { calls.withLock { $0.append("breaker \(destination) \(open)") } }
    }

    @Test func everyCallbackReachesEveryObserver() {
        let first = Recorder(), second = Recorder()
        let observers = DeliveryObservers([first, second])
        let trace = EventTrace(eventId: "e-1")
        observers.attemptFinished(destination: "billing", outcome: "retry", seconds: 0.5)
        observers.deadLettered(destination: "billing", reason: .exhausted)
        observers.entriesClaimed(destination: "billing", count: 2)
        observers.entriesLost(destination: "billing", count: 1)
        observers.recordTampered(record: "event")
        observers.traced(TraceSpan(traceId: trace.traceId, spanId: trace.receiveSpanId, parentSpanId: nil, name: "receive",
                                   kind: .server, start: 1, end: 2, attributes: [], status: .ok))
        observers.breakerChanged(destination: "billing", open: true, error: "HTTP 503")
        let expected = ["attempt billing retry", "dead billing exhausted", "claimed billing 2", "lost billing 1", "tampered event",
                        "span receive", "breaker billing true"]
        #expect(first.calls.current == expected)
        #expect(second.calls.current == expected)
    }
}
