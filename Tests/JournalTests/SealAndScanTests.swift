import StoreRelayTestSupport
import Testing
@testable import StoreRelayStorage
import Foundation
import StoreRelayCore

/// Sealing (a segment's ids go to `seen-ids` once the writer moves past it, so an open reads
/// only the newest segment) and reading the journal in order from a cursor.
@Suite struct SealAndScanTests {
    /// Appends `count` records of 40 bytes to a journal with 150-byte segments.
    func fill(_ journal: Journal, _ count: Int, prefix: String = "evt") async throws -> [RecordPosition] {
        var positions: [RecordPosition] = []
        for n in 0..<count {
            positions.append(try #require(await journal.append(id: "\(prefix)-\(n)", payload: Array(repeating: UInt8(n), count: 40)).position))
        }
        return positions
    }

    /// Every record from `start` on, read `budget` bytes at a time.
    func readAll(_ journal: Journal, from start: RecordPosition, budget: Int = 1,
                 only kind: JournalRecordKind? = nil) throws -> [JournalRecord] {
        var records: [JournalRecord] = []
        var position = start
        while true {
            let chunk = try journal.records(from: position, budget: budget, only: kind)
            records += chunk.records
            #expect(chunk.next >= position)
            position = chunk.next
            if chunk.atEnd || chunk.records.isEmpty { return records }
        }
    }

    @Test func anOpenReadsOnlyTheSegmentsNotSealed() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let options = testOptions(segmentSizeLimit: 150)
        let journal = try Journal.open(directory: dir.journal, options: options, logger: .disabled)
        _ = try await fill(journal, 20)
        let segments = journal.segments
        #expect(segments.count >= 5)
        journal.close()
        #expect(SealedMarker.read(directory: dir.journal) == segments.dropLast().last)

        let reopened = try Journal.open(directory: dir.journal, options: options, logger: .disabled)
        defer { reopened.close() }
        // Read at open: the newest segment only; every id is still a duplicate.
        #expect(Set(reopened.recovered.map(\.position.segment)) == [segments.last!])
        for n in 0..<20 {
            #expect(reopened.contains(id: "evt-\(n)"))
            #expect(await reopened.append(id: "evt-\(n)", "again").isDuplicate)
        }
        // Every record is still there to read, in order.
        #expect(try readAll(reopened, from: reopened.startPosition).map(\.id) == (0..<20).map { "evt-\($0)" })
    }

    @Test func theReaderCrossesSegmentsStopsAtTheEndAndSkipsRetiredOnes() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try Journal.open(directory: dir.journal, options: testOptions(segmentSizeLimit: 150), logger: .disabled)
        defer { journal.close() }
        let positions = try await fill(journal, 12)
        let all = try readAll(journal, from: journal.startPosition)
        #expect(all.map(\.id) == (0..<12).map { "evt-\($0)" })
        #expect(all.map(\.position) == positions)
        for (record, next) in zip(all, all.dropFirst()) {
            #expect(record.end <= next.position, "a record ends where the next may start")
            #expect(Journal.end(ofRecordAt: record.position, id: record.id, payloadBytes: record.payload.count) == record.end)
        }
        // At the end: nothing more until the next append, which is then found from there.
        let end = try journal.records(from: all.last!.end)
        #expect(end.records.isEmpty && end.atEnd)
        _ = try #require(await journal.append(id: "later", "x").position)
        #expect(try journal.records(from: all.last!.end).records.map(\.id) == ["later"])

        // A cursor in a segment retired since goes on at the next segment there is.
        let retired = try await journal.retire(upTo: positions[5].segment).get()
        #expect(!retired.isEmpty)
        let resumed = try readAll(journal, from: positions[0])
        #expect(resumed.first?.position.segment == journal.segments.first)
        #expect(resumed.last?.id == "later")
    }

    /// Reading one kind steps over the others by their length, across segments.
    @Test func readingOneKindStepsOverTheOthers() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try Journal.open(directory: dir.journal, options: testOptions(segmentSizeLimit: 300), logger: .disabled)
        defer { journal.close() }
        for n in 0..<10 {
            _ = try #require(await journal.append(id: "evt-\(n)", payload: Array(repeating: 7, count: 60)).position)
            if n % 3 == 0 {
                let stored = await withCheckedContinuation { continuation in
                    journal.appendProgress(id: "evt-\(n)", payload: Array("progress \(n)".utf8)) { continuation.resume(returning: $0) }
                }
                #expect(stored.position != nil)
            }
        }
        #expect(journal.segments.count > 2)
        let progress = try readAll(journal, from: journal.startPosition, only: .progress)
        #expect(progress.map(\.id) == ["evt-0", "evt-3", "evt-6", "evt-9"])
        #expect(progress.allSatisfy { $0.kind == .progress })
        #expect(progress.last.map { try? journal.records(from: $0.end, only: .progress) }??.atEnd == true)
    }

    @Test func anUnreadableSealedMarkerMeansEverySegmentIsRead() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let options = testOptions(segmentSizeLimit: 150)
        let journal = try Journal.open(directory: dir.journal, options: options, logger: .disabled)
        _ = try await fill(journal, 10)
        let segments = journal.segments
        journal.close()
        try writeBytes(dir.journal + "/" + SealedMarker.fileName, Array("not a marker".utf8))
        #expect(SealedMarker.read(directory: dir.journal) == nil)

        let reopened = try Journal.open(directory: dir.journal, options: options, logger: .disabled)
        defer { reopened.close() }
        #expect(Set(reopened.recovered.map(\.position.segment)) == Set(segments))
        for n in 0..<10 { #expect(reopened.contains(id: "evt-\(n)")) }
        // Sealed again at open, with a marker that reads.
        #expect(SealedMarker.read(directory: dir.journal) == segments.dropLast().last)
    }

    @Test func damageInASealedSegmentIsSkippedWhenRead() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try Journal.open(directory: dir.journal, options: testOptions(segmentSizeLimit: 400), logger: .disabled)
        defer { journal.close() }
        let positions = try await fill(journal, 12)
        let victim = positions[1]
        #expect(victim.segment == positions[0].segment && victim.segment < journal.activeSegment)
        // One byte of the second record's payload flips on disk.
        let path = segmentPath(dir.journal, victim.segment)
        var bytes = readBytes(path)
        bytes[victim.offset + 30] ^= 0xFF
        try writeBytes(path, bytes)
        let ids = try readAll(journal, from: journal.startPosition, budget: 1 << 20).map(\.id)
        #expect(!ids.contains("evt-1"))
        #expect(ids == (0..<12).filter { $0 != 1 }.map { "evt-\($0)" })
    }

    /// A sealed segment that ends in a few bytes too short for a frame header (a copy cut
    /// short, a stray write): they are damage to step over. The reader used to take them for a
    /// record still arriving and asked for the same bytes again, for ever.
    @Test(.timeLimit(.minutes(1))) func aSealedSegmentEndingInPartOfAHeaderIsReadToTheEnd() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try Journal.open(directory: dir.journal, options: testOptions(segmentSizeLimit: 400), logger: .disabled)
        defer { journal.close() }
        let positions = try await fill(journal, 12)
        #expect(positions[0].segment < journal.activeSegment)
        let path = segmentPath(dir.journal, positions[0].segment)
        try writeBytes(path, readBytes(path) + [0x07, 0x00, 0x00])
        let ids = try readAll(journal, from: journal.startPosition).map(\.id)
        #expect(ids == (0..<12).map { "evt-\($0)" })
    }

    @Test func aSegmentThatVanishesUnderneathIsAnError() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try Journal.open(directory: dir.journal, options: testOptions(segmentSizeLimit: 150), logger: .disabled)
        defer { journal.close() }
        let positions = try await fill(journal, 6)
        try FileManager.default.removeItem(atPath: segmentPath(dir.journal, positions[0].segment))
        #expect(throws: StorageError.self) { _ = try journal.records(from: positions[0]) }
    }
}
