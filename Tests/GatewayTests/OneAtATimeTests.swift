import Dispatch
import Testing
@testable import StoreRelayGateway
import StoreRelayCore
import StoreRelayTestSupport

/// The line reconciliation passes wait in: one piece at a time, in order, each holding the
/// line until it says it is done, from whatever queue.
@Suite(.timeLimit(.minutes(1))) struct OneAtATimeTests {
    @Test func piecesRunOneAtATimeInOrder() {
        let line = OneAtATime(queue: DispatchQueue(label: "test.line"))
        let log = Locked<[String]>([])
        let dones = Locked<[@Sendable () -> Void]>([])
        for name in ["a", "b", "c"] {
            line.enqueue { done in
                log.withLock { $0.append("start " + name) }
                dones.withLock { $0.append { log.withLock { $0.append("end " + name) }; done() } }
            }
        }
        #expect(pollUntil(timeout: 5) { dones.current.count == 1 })
        // "a" holds the line: nothing else starts while it waits, however long.
        #expect(!pollUntil(timeout: 0.2) { dones.current.count > 1 })
        // Finished from another queue, twice: the second call must not start a second piece.
        let first = dones.current[0]
        DispatchQueue.global().async { first(); first() }
        #expect(pollUntil(timeout: 5) { dones.current.count == 2 })
        #expect(!pollUntil(timeout: 0.2) { dones.current.count > 2 })
        dones.current[1]()
        #expect(pollUntil(timeout: 5) { dones.current.count == 3 })
        dones.current[2]()
        #expect(pollUntil(timeout: 5) { log.current.count == 7 })
        // Each piece started only after the one before it ended (the second "end a" races "start b").
        let starts = log.current.filter { $0.hasPrefix("start") }
        #expect(starts == ["start a", "start b", "start c"])
        for (piece, before) in [("b", "a"), ("c", "b")] {
            let started = log.current.firstIndex(of: "start " + piece) ?? -1
            let ended = log.current.firstIndex(of: "end " + before) ?? Int.max
            #expect(ended < started, "\(log.current)")
        }
    }

    @Test func anIdleLineStartsAPieceAtOnce() {
        let line = OneAtATime(queue: DispatchQueue(label: "test.line"))
        let ran = Locked(0)
        for _ in 0..<3 {
            line.enqueue { done in
                ran.withLock { $0 += 1 }
                done()
            }
            #expect(pollUntil(timeout: 5) { ran.current > 0 })
        }
        #expect(pollUntil(timeout: 5) { ran.current == 3 })
    }
}
