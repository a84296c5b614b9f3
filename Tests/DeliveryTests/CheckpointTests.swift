import Foundation
import Testing
@testable import StoreRelayDelivery
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

/// Delivery checkpoints: what they store, and the replay of the journal's tail after them.
@Suite struct CheckpointTests {
    static let attempt1 = DeliveryAttempt(at: Timestamp(milliseconds: 1_700_000_001_000), status: 503, error: "HTTP 503", durationMs: 12)
    static let attempt2 = DeliveryAttempt(at: Timestamp(milliseconds: 1_700_000_002_000), error: "connection refused", durationMs: 1)
    static let attempt3 = DeliveryAttempt(at: Timestamp(milliseconds: 1_700_000_003_000), status: 500, durationMs: 40)

    static func job(_ id: String, at position: RecordPosition, attempts: [DeliveryAttempt] = []) -> ParkedJob {
        ParkedJob(eventId: id, destination: "hook", position: position, attempts: attempts,
                  due: Timestamp(milliseconds: 1_700_000_060_000), attemptsBeforeBudget: 0,
                  budgetStart: Timestamp(milliseconds: 1_699_999_999_000))
    }

    @Test func aCheckpointRoundTripsAndAnythingElseIsRefused() throws {
        var book = DestinationBook(cursor: RecordPosition(segment: 3, offset: 160), backlog: 7)
        let parked = Self.job("e1", at: RecordPosition(segment: 2, offset: 16), attempts: [Self.attempt1, Self.attempt2])
        book.unfinished[parked.position] = parked
        // Progress a start-up replay found for events past the cursor, kept until they are read.
        book.replayed[RecordPosition(segment: 3, offset: 400)] = DestinationProgress(
            attempts: [Self.attempt3], nextAttempt: Timestamp(milliseconds: 1_700_000_070_000), finished: false)
        book.replayed[RecordPosition(segment: 3, offset: 600)] = DestinationProgress(finished: true)
        let checkpoint = DeliveryCheckpoint(journal: RecordPosition(segment: 3, offset: 900), router: RecordPosition(segment: 3, offset: 800),
                                            destinations: ["hook": book, "idle": DestinationBook(cursor: RecordPosition(segment: 3, offset: 900))])
        let bytes = checkpoint.encoded()
        #expect(DeliveryCheckpoint(decoding: bytes) == checkpoint)
        let text = String(decoding: bytes, as: UTF8.self)
        for garbage in ["", "{}", "[]", text.replacingOccurrences(of: "\"version\":1", with: "\"version\":2"),
                        String(text.dropLast(9)), text.replacingOccurrences(of: "\"cursor\":[3,160]", with: "\"cursor\":[-3,160]")] {
            #expect(DeliveryCheckpoint(decoding: Array(garbage.utf8)) == nil, "\(garbage.prefix(60))")
        }
        // The window's oldest job is what the destination still needs from the journal.
        #expect(book.oldestNeeded == parked.position)
        #expect(DestinationBook(cursor: RecordPosition(segment: 4, offset: 16)).oldestNeeded == RecordPosition(segment: 4, offset: 16))
    }

    /// Appends a record and waits for its position.
    static func append(_ journal: Journal, progress: DeliveryProgress? = nil, id: String, at eventPosition: RecordPosition? = nil) throws -> RecordPosition {
        let stored = Locked<RecordPosition?>(nil)
        let done = DispatchSemaphore(value: 0)
        let completion: @Sendable (AppendOutcome) -> Void = { outcome in
            if case .stored(let position) = outcome { stored.withLock { $0 = position } }
            done.signal()
        }
        if let progress {
            journal.appendProgress(id: id, payload: progress.encoded(eventAt: eventPosition), completion: completion)
        } else {
            journal.append(id: id, payload: Array("event \(id)".utf8), completion: completion)
        }
        done.wait()
        return try #require(stored.current)
    }

    /// Records decided after the checkpoint was copied are applied once: those it holds
    /// already change nothing, finished work leaves the window, and progress for events past
    /// the cursor waits for them to be read again.
    @Test func theTailIsAppliedOnceWhateverTheCheckpointHolds() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-tail")
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try Journal.open(directory: directory.path + "/journal", logger: .disabled)
        defer { journal.close() }
        let p = try (0..<4).map { try Self.append(journal, id: "e\($0)") }
        var book = DestinationBook(cursor: p[2])
        book.unfinished[p[0]] = Self.job("e0", at: p[0], attempts: [Self.attempt1])
        book.unfinished[p[1]] = Self.job("e1", at: p[1])
        let tailStart = journal.endPosition
        let later = Timestamp(milliseconds: 1_700_000_090_000)
        _ = try Self.append(journal, progress: .attempted(destination: "hook", attempt: Self.attempt1, next: later), id: "e0", at: p[0])
        _ = try Self.append(journal, progress: .attempted(destination: "hook", attempt: Self.attempt2, next: later), id: "e0", at: p[0])
        _ = try Self.append(journal, progress: .delivered(destination: "hook"), id: "e1", at: p[1])
        _ = try Self.append(journal, progress: .attempted(destination: "hook", attempt: Self.attempt3, next: later), id: "e2", at: p[2])
        _ = try Self.append(journal, progress: .delivered(destination: "hook"), id: "e3", at: p[3])
        _ = try Self.append(journal, progress: .deadLettered(destination: "", deadLetterId: "dl"), id: "e3", at: p[3])
        // A record of an older version names its event by id only: not resolved from a checkpoint.
        _ = try Self.append(journal, progress: .delivered(destination: "hook"), id: "e0")

        var tail = TailReplay(destinations: ["hook": book], resolvesIds: false)
        try tail.replay(journal, from: tailStart)
        let replayed = try #require(tail.destinations["hook"])
        #expect(replayed.unfinished[p[0]]?.attempts == [Self.attempt1, Self.attempt2])
        #expect(replayed.unfinished[p[0]]?.due == later)
        #expect(replayed.unfinished[p[1]] == nil)
        #expect(replayed.replayed[p[2]] == DestinationProgress(attempts: [Self.attempt3], nextAttempt: later, finished: false))
        #expect(replayed.replayed[p[3]]?.finished == true)
        #expect(tail.lettersWritten == [p[3]])
        #expect(tail.records == 7)

        // The same tail over its own result changes nothing.
        var again = TailReplay(destinations: tail.destinations, resolvesIds: false)
        try again.replay(journal, from: tailStart)
        #expect(again.destinations == tail.destinations)
    }

    /// Without a checkpoint the whole journal is the tail: records of versions before
    /// checkpoints (no position) are matched to their event by id.
    @Test func withoutACheckpointOldRecordsAreMatchedByEventId() throws {
        let directory = try TestPaths.makeTemporaryDirectory("storerelay-tail-legacy")
        defer { try? FileManager.default.removeItem(at: directory) }
        let journal = try Journal.open(directory: directory.path + "/journal", logger: .disabled)
        defer { journal.close() }
        let e0 = try Self.append(journal, id: "e0")
        let e1 = try Self.append(journal, id: "e1")
        _ = try Self.append(journal, progress: .delivered(destination: "hook"), id: "e0")
        _ = try Self.append(journal, progress: .attempted(destination: "hook", attempt: Self.attempt1,
                                                          next: Timestamp(milliseconds: 1_700_000_005_000)), id: "e1")
        var tail = TailReplay(destinations: ["hook": DestinationBook(cursor: journal.startPosition)], resolvesIds: true)
        try tail.replay(journal, from: journal.startPosition)
        #expect(tail.destinations["hook"]?.replayed[e0]?.finished == true)
        #expect(tail.destinations["hook"]?.replayed[e1]?.attempts == [Self.attempt1])
    }
}
