import Dispatch
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// A kind whose sends wait until the test answers them: attempts in flight on demand.
private struct HeldKind: DestinationKind {
    static let name = "held"
    let waiting = Locked<[@Sendable (Bool) -> Void]>([])
    let closes = Locked(0)

    var concurrency: Int { 4 }
    func prepare(_ notification: StoredNotification) -> [UInt8] { [] }
    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Bool) -> Void) {
        waiting.withLock { $0.append(answer) }
    }
    func classify(_ answer: Bool, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        let attempt = DeliveryAttempt(at: started, status: answer ? 200 : 503, durationMs: durationMs)
        return answer ? .delivered(attempt) : .retry(attempt, retryAfter: nil)
    }
    func close(completion: @escaping @Sendable () -> Void) {
        closes.withLock { $0 += 1 }
        completion()
    }

    /// Answers every send waiting so far; how many there were.
    @discardableResult func answer(_ delivered: Bool) -> Int {
        let answers = waiting.withLock { list -> [@Sendable (Bool) -> Void] in
            let taken = list
            list = []
            return taken
        }
        for answer in answers { answer(delivered) }
        return answers.count
    }
}

/// What a destination queue told the engine, in order.
private final class Told: Sendable {
    let lines = Locked<[String]>([])
    func add(_ line: String) { lines.withLock { $0.append(line) } }

    var events: DestinationQueue.Events {
        DestinationQueue.Events(
            attempted: { job, _ in self.add("attempted \(job.eventId)") },
            delivered: { job in self.add("delivered \(job.eventId)") },
            deadLettered: { job, reason, _ in self.add("dead-lettered \(job.eventId) \(reason.rawValue)") },
            readBack: { _, completion in completion(nil) },
            unreadable: { _ in },
            readBacklog: { _, cursor, _, completion in completion(BacklogRead(jobs: [], next: cursor, atEnd: true)) })
    }
}

/// The lifecycle of a single-node destination queue, on a kind without a socket: what a stop
/// and a reload's retirement do with attempts in flight and jobs waiting.
@Suite struct DestinationLifecycleTests {
    let clock = ManualClock()
    private let kind = HeldKind()
    private let told = Told()

    private func queue() throws -> DestinationQueue {
        let definition = DestinationConfiguration(name: "held", kind: .webhook(WebhookOptions(url: try HTTPURL("http://127.0.0.1:1/"))))
        let setup = DestinationSetup(kind: kind, limits: DeliveryLimits(
            maxAttempts: 5, maxAge: .seconds(3600), schedule: RetrySchedule(initial: .seconds(60), maximum: .seconds(60))))
        return DestinationQueue(definition: definition, setup: setup, wholeJobLimit: 8, window: 16, clock: clock,
                                observer: NoDeliveryObserver(), logger: .disabled,
                                keeper: BookKeeper(DestinationBook(cursor: RecordPosition(segment: 1, offset: 0))), events: told.events)
    }

    private func job(_ id: String, dueIn delay: Duration = .zero) throws -> DeliveryJob {
        DeliveryJob(notification: try sampleNotification(id: id), destination: "held", body: [], attempts: [],
                    due: clock.now().advanced(by: delay), budgetStart: clock.now(), replayOf: "letter-\(id)")
    }

    private func sends(_ count: Int) -> Bool { pollUntil(timeout: 5) { kind.waiting.current.count == count } }

    @Test func aStopWaitsForTheAttemptInFlightAndRecordsItsOutcome() throws {
        let queue = try queue()
        queue.enqueue(try job("one"))
        #expect(sends(1))
        let stopped = Locked(false)
        queue.stop(grace: .seconds(30)) { told.add("stopped"); stopped.withLock { $0 = true } }
        queue.enqueue(try job("late"))
        #expect(!pollUntil(timeout: 0.2) { stopped.current }, "the attempt in flight holds the stop")
        #expect(kind.answer(true) == 1)
        #expect(pollUntil(timeout: 5) { stopped.current })
        #expect(told.lines.current == ["delivered one", "stopped"], "recorded before the stop completes; nothing new taken")
        #expect(kind.closes.current == 1)
    }

    @Test func anOutcomeAfterTheGraceIsNotRecorded() throws {
        let queue = try queue()
        queue.enqueue(try job("slow"))
        #expect(sends(1))
        let stopped = Locked(false)
        queue.stop(grace: .milliseconds(20)) { stopped.withLock { $0 = true } }
        #expect(pollUntil(timeout: 5) { stopped.current })
        kind.answer(true)
        let second = Locked(false)
        queue.stop { second.withLock { $0 = true } }
        #expect(pollUntil(timeout: 5) { second.current }, "a second stop completes at once")
        #expect(told.lines.current.isEmpty, "the journal resumes it on the next start")
        #expect(kind.closes.current == 1)
    }

    @Test func aRetiringQueueHandsOverWhatWaitsAndWhatMustBeRetried() throws {
        let queue = try queue()
        queue.enqueue(try job("now"))
        queue.enqueue(try job("later", dueIn: .seconds(3600)))
        #expect(sends(1))
        let handed = Locked<[String]>([])
        let retired = Locked(false)
        queue.retire(handOff: { job in
            guard case .whole(let whole) = job else { return }
            handed.withLock { $0.append(whole.eventId) }
        }, completion: { retired.withLock { $0 = true } })
        #expect(pollUntil(timeout: 5) { handed.current == ["later"] })
        #expect(!retired.current, "not before the attempt in flight ends")
        kind.answer(false)
        #expect(pollUntil(timeout: 5) { retired.current })
        #expect(handed.current == ["later", "now"] && told.lines.current == ["attempted now"])
        queue.enqueue(try job("after"))
        #expect(pollUntil(timeout: 5) { handed.current.count == 3 }, "whatever comes after goes to the new queue too")
        let stopped = Locked(false)
        queue.stop { stopped.withLock { $0 = true } }
        #expect(pollUntil(timeout: 5) { stopped.current } && kind.closes.current == 1)
    }

    @Test func aStopDuringARetirementEndsBoth() throws {
        let queue = try queue()
        queue.enqueue(try job("busy"))
        #expect(sends(1))
        let ended = Locked<[String]>([])
        queue.retire(handOff: { _ in }, completion: { ended.withLock { $0.append("retired") } })
        queue.stop(grace: .seconds(30)) { ended.withLock { $0.append("stopped") } }
        kind.answer(true)
        #expect(pollUntil(timeout: 5) { ended.current == ["retired", "stopped"] })
        #expect(told.lines.current == ["delivered busy"] && kind.closes.current == 1)
        let again = Locked(false)
        queue.retire(handOff: { _ in }, completion: { again.withLock { $0 = true } })
        #expect(pollUntil(timeout: 5) { again.current }, "retiring a stopped queue completes at once")
    }
}
