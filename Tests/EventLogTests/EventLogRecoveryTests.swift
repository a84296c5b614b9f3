import Foundation
@testable import StoreRelayStorage
import StoreRelayTestSupport
import StoreRelayCore
import Testing

/// Restart, torn tails, missing indexes and retention, on real files.
@Suite struct EventLogRecoveryTests {
    private func hours(_ n: Int) -> Timestamp { Timestamp(milliseconds: Summaries.start.milliseconds + Int64(n) * 3_600_000) }

    @Test func aRestartKeepsEventsAndStates() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        let log = try EventLog.scratch(directory, clock: clock)
        log.add((0..<6).map { Summaries.make($0, at: hours($0 / 2)) })
        log.setState(.delivered, eventId: Summaries.id(0), destination: "billing")
        log.setState(.deadLettered, eventId: Summaries.id(5), destination: "analytics")
        await log.flushed()
        log.close()
        let reopened = try EventLog.scratch(directory, clock: clock)
        defer { reopened.close() }
        #expect(reopened.recoveryNotes.isEmpty)
        #expect(reopened.segmentCount == 3)
        #expect(try await reopened.all(limit: 2).map(\.id) == (0..<6).reversed().map(Summaries.id))
        #expect(try await reopened.page(EventLogQuery(q: Summaries.id(0))).items.first?.deliveries.map(\.state) == [.delivered, .pending])
        #expect(try await reopened.page(EventLogQuery(q: "tx-5")).items.first?.deliveries.map(\.state) == [.pending, .deadLettered])
        // Appends go on in a new segment or the reopened one.
        reopened.add([Summaries.make(6, at: hours(2))])
        reopened.setState(.delivered, eventId: Summaries.id(4), destination: "billing")
        await reopened.flushed()
        #expect(try await reopened.page(limit: 1).items.map(\.id) == [Summaries.id(6)])
        #expect(try await reopened.page(EventLogQuery(q: "tx-4")).items.first?.deliveries.first?.state == .delivered)
    }

    /// A `kill -9` in the middle of a batch write: the tail is cut at the last whole record,
    /// at every possible cut, and the log appends after it.
    @Test func aTornTailIsCutAtEveryOffset() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        let log = try EventLog.scratch(directory, clock: clock)
        log.add((0..<3).map { Summaries.make($0) })
        await log.flushed()
        log.close()
        let segment = directory.log + "/" + directory.files(".log")[0]
        let whole = try #require(FileManager.default.contents(atPath: segment))
        let lastRecord = try #require(EventLogRecord.encode(Summaries.make(2))).count
        for cut in stride(from: whole.count - lastRecord + 1, to: whole.count, by: 1) {
            try whole.prefix(cut).write(to: URL(fileURLWithPath: segment))
            let reopened = try EventLog.scratch(directory, clock: clock)
            #expect(reopened.recoveryNotes.contains { $0.contains("torn") }, "cut \(cut)")
            #expect(try await reopened.all(limit: 10).map(\.id) == [1, 0].map(Summaries.id), "cut \(cut)")
            reopened.close()
            #expect(try FileManager.default.attributesOfItem(atPath: segment)[.size] as? Int == whole.count - lastRecord)
        }
        // Garbage after whole records is cut as well, and appends follow the last good one.
        try (whole + Data([0x13, 0x37, 0, 0, 0, 0, 0x45, 0x4C, 9, 9, 9, 9, 9])).write(to: URL(fileURLWithPath: segment))
        let reopened = try EventLog.scratch(directory, clock: clock)
        defer { reopened.close() }
        reopened.add([Summaries.make(3)])
        await reopened.flushed()
        #expect(try await reopened.all(limit: 10).map(\.id) == [3, 2, 1, 0].map(Summaries.id))
    }

    @Test func aMissingOrDamagedIndexIsRebuilt() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        let log = try EventLog.scratch(directory, clock: clock)
        log.add((0..<6).map { Summaries.make($0, at: hours($0 / 2)) })
        await log.flushed()
        log.close()
        let indexes = directory.files(".idx")
        #expect(indexes.count == 2)
        try FileManager.default.removeItem(atPath: directory.log + "/" + indexes[0])
        let handle = try #require(FileHandle(forUpdatingAtPath: directory.log + "/" + indexes[1]))
        try handle.truncate(atOffset: 60)
        try handle.close()
        try Data("junk".utf8).write(to: URL(fileURLWithPath: directory.log + "/events-00000000000000000099.idx"))
        let reopened = try EventLog.scratch(directory, clock: clock)
        defer { reopened.close() }
        #expect(reopened.recoveryNotes.filter { $0.contains("index rebuilt") }.count == 2)
        #expect(directory.files(".idx").count == 2, "rebuilt, and the stray one removed")
        #expect(try await reopened.page(EventLogQuery(q: "otx-0")).items.map(\.id) == [2, 1, 0].map(Summaries.id))
        #expect(try await reopened.all(limit: 4).count == 6)
    }

    @Test func aSegmentWithABadHeaderIsDropped() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        try FileManager.default.createDirectory(atPath: directory.log, withIntermediateDirectories: true)
        try Data("not a segment at all".utf8).write(to: URL(fileURLWithPath: directory.log + "/events-00000000000000000001.log"))
        let log = try EventLog.scratch(directory, clock: clock)
        defer { log.close() }
        #expect(log.recoveryNotes.count == 1)
        log.add([Summaries.make(1)])
        await log.flushed()
        #expect(try await log.page().items.map(\.id) == [Summaries.id(1)])
        #expect(directory.files(".log") == ["events-00000000000000000002.log"])
    }

    @Test func retentionDeletesWholeOldSegments() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(hours(0))
        let log = try EventLog.scratch(directory, clock: clock) { $0.retention = .seconds(3 * 3_600) }
        log.add((0..<6).map { Summaries.make($0, at: hours($0)) })
        await log.flushed()
        #expect(directory.files(".log").count == 6)
        clock.advance(by: .seconds(7 * 3_600 + 1800))  // now 7.5h: events before 4.5h are out
        #expect(try await log.all(limit: 10).map(\.id) == [5].map(Summaries.id), "expired events are gone for readers at once")
        log.add([Summaries.make(6, at: hours(7))])  // a batch runs retention (at most once a minute)
        await log.flushed()
        #expect(directory.files(".log").count == 2)
        #expect(directory.files(".idx").count == 1)
        log.close()
        clock.advance(by: .seconds(30 * 3_600))
        let reopened = try EventLog.scratch(directory, clock: clock) { $0.retention = .seconds(3 * 3_600) }
        defer { reopened.close() }
        #expect(directory.files(".log").isEmpty, "opening applies retention too, to the open segment as well")
        #expect(try await reopened.all(limit: 10).isEmpty)
    }

    @Test func aFullSegmentIsSealedBeforeItsSpanEnds() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        let log = try EventLog.scratch(directory, clock: clock) { $0.maxRecordsPerSegment = 10 }
        defer { log.close() }
        log.add((0..<35).map { Summaries.make($0) })
        await log.flushed()
        #expect(log.segmentCount == 4)
        #expect(try await log.all(limit: 8).map(\.id) == (0..<35).reversed().map(Summaries.id))
        #expect(try await log.page(EventLogQuery(q: "otx-3")).items.map(\.id) == [11, 10, 9].map(Summaries.id), "across two segments")
    }
}
