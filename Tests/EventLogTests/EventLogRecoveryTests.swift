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

    /// Random damage to a segment or its index, a hundred times: opening never fails or
    /// crashes; the open segment keeps the records before its first damaged one; a sealed
    /// segment, whose index is trusted, loses only the records that fail their check when
    /// read; a cut index is rebuilt whole. What is listed is always in order.
    @Test func randomDamageLosesOnlyTheDamagedRecords() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        let log = try EventLog.scratch(directory, clock: clock) { $0.maxRecordsPerSegment = 30 }
        log.add((0..<50).map { Summaries.make($0) })
        await log.flushed()
        log.close()
        let sealedLog = "events-00000000000000000001.log", openLog = "events-00000000000000000002.log"
        let files = directory.files(".log") + directory.files(".idx")
        #expect(files == [sealedLog, openLog, "events-00000000000000000001.idx"])
        var pristine: [String: Data] = [:]
        for file in files { pristine[file] = FileManager.default.contents(atPath: directory.log + "/" + file) }
        let ids = (0..<50).map(Summaries.id)
        var random = SeededGenerator(seed: 0xDA3A6E)
        for round in 0..<100 {
            for (file, data) in pristine { try data.write(to: URL(fileURLWithPath: directory.log + "/" + file)) }
            let victim = files[Int.random(in: 0..<files.count, using: &random)]
            var bytes = [UInt8](pristine[victim]!)
            let damaged = Int.random(in: 1...3, using: &random)
            for _ in 0..<damaged {
                bytes[Int.random(in: 16..<bytes.count, using: &random)] = UInt8.random(in: 0...255, using: &random)
            }
            let truncated = round % 4 == 0
            if truncated { bytes.removeLast(Int.random(in: 1..<(bytes.count - 16), using: &random)) }
            try Data(bytes).write(to: URL(fileURLWithPath: directory.log + "/" + victim))
            let reopened = try EventLog.scratch(directory, clock: clock) { $0.maxRecordsPerSegment = 30 }
            let listed = Array(try await reopened.all(limit: 50).map(\.id).reversed())
            reopened.close()
            let positions = listed.compactMap { ids.firstIndex(of: $0) }
            #expect(positions.count == listed.count && positions == positions.sorted() && Set(positions).count == positions.count,
                    "in order, each once: round \(round)")
            let first = positions.filter { $0 < 30 }, second = positions.filter { $0 >= 30 }
            switch victim {
            case openLog:
                #expect(first == Array(0..<30), "round \(round)")
                #expect(second == Array(30..<(30 + second.count)), "a prefix of the open segment: round \(round)")
            case sealedLog:
                #expect(second == Array(30..<50), "round \(round)")
                if !truncated { #expect(first.count >= 30 - damaged, "at most the damaged records: round \(round)") }
            default:
                // A cut or a damaged header fails the index's size or CRC check: rebuilt whole.
                // Its offsets and slots carry no checksum (reading them all would make an open
                // cost what the log holds); a damaged offset points at bytes that fail the
                // record's own check, so at most the damaged records go missing.
                #expect(second == Array(30..<50), "round \(round)")
                #expect(truncated ? first == Array(0..<30) : first.count >= 30 - damaged, "round \(round)")
            }
        }
    }

    /// A batch that cannot be written (ENOSPC from /dev/full standing in for the segment):
    /// its summaries are lost, the index forgets them, and the next batch appends right
    /// after the last good record, so nothing is listed twice or pointed at wrongly.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "needs /dev/full"))
    func aFailedBatchIsForgottenAndTheNextOneWritten() async throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let clock = ManualClock(Summaries.start)
        let log = try EventLog.scratch(directory, clock: clock)
        log.add((0..<3).map { Summaries.make($0) })
        await log.flushed()
        let full = open("/dev/full", O_RDWR)
        #expect(full >= 0)
        defer { close(full) }
        // The open segment's descriptor now writes to /dev/full; recovery reopens the file by name.
        log.queue.sync { _ = dup2(full, log.state.open!.fd) }
        // One append: a second could make a batch of its own, written after the reopen.
        log.add([Summaries.make(3)])
        await log.flushed()
        log.add([Summaries.make(5)])
        await log.flushed()
        let expected = [5, 2, 1, 0].map(Summaries.id)
        #expect(try await log.all(limit: 2).map(\.id) == expected)
        #expect(try await log.page(EventLogQuery(q: "tx-5")).items.map(\.id) == [Summaries.id(5)])
        #expect(try await log.page(EventLogQuery(q: "tx-3")).items.isEmpty)
        log.close()
        let reopened = try EventLog.scratch(directory, clock: clock)
        defer { reopened.close() }
        #expect(reopened.recoveryNotes.isEmpty)
        #expect(try await reopened.all(limit: 10).map(\.id) == expected)
    }
}
