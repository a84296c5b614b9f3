import Dispatch
import Testing
@testable import StoreRelayDelivery
import StoreRelayConfig
import StoreRelayNet
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// A kind that answers every send at once, counting them.
private struct CountingKind: DestinationKind {
    static let name = "counting"
    let sent = Locked<[String]>([])

    var concurrency: Int { 4 }
    func prepare(_ notification: StoredNotification) -> [UInt8] { [] }
    func send(_ job: DeliveryJob, attempt: Int, now: Timestamp, answer: @escaping @Sendable (Bool) -> Void) {
        sent.withLock { $0.append(job.eventId) }
        answer(true)
    }
    func classify(_ answer: Bool, started: Timestamp, durationMs: Int64, now: Timestamp) -> AttemptOutcome {
        .delivered(DeliveryAttempt(at: started, status: 200, durationMs: durationMs))
    }
    func close(completion: @escaping @Sendable () -> Void) { completion() }
}

/// A paused single-node queue costs nothing while its backlog waits (SPEC "Delivery
/// controls"): it reads nothing from the journal, takes no offered event into memory and
/// starts no attempt; resumed, it reads its backlog from where it stood.
@Suite struct PausedQueueTests {
    let clock = ManualClock()
    private let kind = CountingKind()
    /// Each backlog read the queue asked for: its cursor.
    private let reads = Locked<[RecordPosition]>([])
    /// What the journal holds for the backlog: handed out on the first read.
    private let backlog = Locked<[DeliveryJob]>([])

    private func queue() throws -> DestinationQueue {
        let definition = DestinationConfiguration(name: "counted", kind: .webhook(WebhookOptions(url: try HTTPURL("http://127.0.0.1:1/"))))
        let setup = DestinationSetup(kind: kind, limits: DeliveryLimits(
            maxAttempts: 5, maxAge: .seconds(3600), schedule: RetrySchedule(initial: .seconds(60), maximum: .seconds(60))))
        let events = DestinationQueue.Events(
            attempted: { _, _ in }, delivered: { _ in }, deadLettered: { _, _, _ in },
            readBack: { _, completion in completion(nil) }, unreadable: { _ in },
            readBacklog: { [reads, backlog] _, cursor, _, completion in
                reads.withLock { $0.append(cursor) }
                let jobs = backlog.withLock { jobs in defer { jobs = [] }; return jobs }
                // Each read reaches the journal's end, past every record offered before it.
                completion(BacklogRead(jobs: jobs, next: RecordPosition(segment: 1, offset: cursor.offset + 100_000), atEnd: true))
            })
        return DestinationQueue(definition: definition, setup: setup, wholeJobLimit: 8, window: 16, clock: clock,
                                observer: NoDeliveryObserver(), logger: .disabled,
                                keeper: BookKeeper(DestinationBook(cursor: RecordPosition(segment: 1, offset: 0))), events: events)
    }

    private func job(_ id: String, at offset: Int) throws -> DeliveryJob {
        DeliveryJob(notification: try sampleNotification(id: id), destination: "counted",
                    position: RecordPosition(segment: 1, offset: offset), body: [], attempts: [], due: clock.now(),
                    budgetStart: clock.now())
    }

    @Test func pausedBeforeItStartsItReadsNothingUntilResumed() throws {
        let queue = try queue()
        let old = [try job("old-1", at: 0), try job("old-2", at: 100)]
        backlog.withLock { $0 = old }
        queue.setPaused(true)
        queue.start(cursor: RecordPosition(segment: 1, offset: 0), unfinished: [])
        for (index, id) in ["new-1", "new-2", "new-3"].enumerated() {
            let offset = 1000 + index * 100
            queue.offer(try sampleNotification(id: id), at: RecordPosition(segment: 1, offset: offset),
                        end: RecordPosition(segment: 1, offset: offset + 100))
        }
        #expect(!pollUntil(timeout: 0.3) { !reads.current.isEmpty || !kind.sent.current.isEmpty })
        #expect(queue.status.paused && queue.status.queueDepth == 0, "nothing was taken into memory")

        queue.setPaused(false)
        #expect(pollUntil(timeout: 5) { kind.sent.current.count == 2 }, "the backlog read from where it stood")
        #expect(reads.current.first == RecordPosition(segment: 1, offset: 0))
        #expect(Set(kind.sent.current) == ["old-1", "old-2"] && !queue.status.paused)
    }

    @Test func pausedWhileLiveAnOfferedEventStaysInTheJournal() throws {
        let queue = try queue()
        queue.start(cursor: RecordPosition(segment: 1, offset: 0), unfinished: [])
        #expect(pollUntil(timeout: 5) { reads.current.count == 1 }, "caught up: live")
        queue.setPaused(true)
        queue.offer(try sampleNotification(id: "while-paused"), at: RecordPosition(segment: 1, offset: 100_000),
                    end: RecordPosition(segment: 1, offset: 100_100))
        queue.enqueue(try job("replayed", at: 500))
        #expect(!pollUntil(timeout: 0.3) { !kind.sent.current.isEmpty || reads.current.count > 1 })
        let stored = try job("while-paused", at: 100_000)
        backlog.withLock { $0 = [stored] }
        queue.setPaused(false)
        #expect(pollUntil(timeout: 5) { Set(kind.sent.current) == ["replayed", "while-paused"] })
        #expect(reads.current == [RecordPosition(segment: 1, offset: 0), RecordPosition(segment: 1, offset: 100_000)],
                "read once more, after the resume, where the paused offer was left")
    }
}
