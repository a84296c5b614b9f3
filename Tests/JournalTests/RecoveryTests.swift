import Foundation
import Testing
@testable import StoreRelayStorage
import StoreRelayCore

@Suite struct RecoveryTests {
    enum Tear: CaseIterable {
        case truncatedLengthHeader, truncatedPayload, flippedChecksumByte, garbageAppended, zerosAppended
    }

    /// Writes three records, closes, returns the segment's path and the record end offsets.
    func threeRecords(in directory: String) async throws -> (path: String, ends: [Int]) {
        let journal = try open(directory)
        var ends: [Int] = []
        for n in 1...3 {
            let position = try #require(await journal.append(id: "evt-\(n)", "payload number \(n)").position)
            ends.append(position.offset)
        }
        journal.close()
        let path = segmentPath(directory, 1)
        ends = Array(ends.dropFirst()) + [fileSize(path)]
        return (path, ends)
    }

    @Test(arguments: Tear.allCases)
    func tornTailIsDroppedAndAppendingContinues(_ tear: Tear) async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let (path, ends) = try await threeRecords(in: dir.journal)
        var bytes = readBytes(path)
        var expectedIDs = ["evt-1", "evt-2", "evt-3"]
        var goodLength = ends[2]
        switch tear {
        case .truncatedLengthHeader:
            bytes += [0x20, 0x00]
        case .truncatedPayload:
            // A whole frame header and part of the payload of a fourth record.
            bytes += [40, 0, 0, 0, 1, 2, 3, 4, 1, 9, 9]
        case .flippedChecksumByte:
            bytes[ends[1] + 5] ^= 0x40
            expectedIDs = ["evt-1", "evt-2"]
            goodLength = ends[1]
        case .garbageAppended:
            bytes += (0..<97).map { UInt8(($0 * 37 + 11) % 256) }
        case .zerosAppended:
            bytes += [UInt8](repeating: 0, count: 4096)
        }
        try writeBytes(path, bytes)

        let sink = MemorySink()
        let journal = try open(dir.journal, sink: sink)
        #expect(journal.recoveredRecords.map(\.id) == expectedIDs)
        #expect(journal.recoveryIssues.map(\.kind) == [.tornTail])
        #expect(journal.recoveryIssues.first?.offset == goodLength)
        #expect(fileSize(path) == goodLength)
        #expect(sink.lines.contains { $0.contains("\"level\":\"warning\"") && $0.contains("torn write") })
        #expect(await journal.append(id: "evt-4", "after the tear").position?.offset == goodLength)
        journal.close()

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.isEmpty)
        #expect(reopened.recoveredRecords.map(\.id) == expectedIDs + ["evt-4"])
    }

    @Test func middleCorruptionIsCopiedAsideAndLaterRecordsSurvive() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        var offsets: [Int] = []
        for n in 1...5 {
            offsets.append(try #require(await journal.append(id: "evt-\(n)", "body \(n)").position).offset)
        }
        journal.close()
        let path = segmentPath(dir.journal, 1)
        let originalSize = fileSize(path)
        var bytes = readBytes(path)
        bytes[offsets[1] + 14] ^= 0xFF
        try writeBytes(path, bytes)

        let sink = MemorySink()
        let recovered = try open(dir.journal, sink: sink)
        let issue = try #require(recovered.recoveryIssues.first)
        #expect(recovered.recoveryIssues.count == 1)
        #expect(issue.kind == .corruption)
        #expect(issue.offset == offsets[1])
        #expect(issue.salvagedRecords == 3)
        let copy = try #require(issue.forensicCopy)
        #expect(copy == path + ".corrupt-\(offsets[1])")
        #expect(readBytes(copy) == Array(bytes[offsets[1]...]))
        #expect(sink.lines.contains { $0.contains("\"level\":\"error\"") })
        // The damaged record is lost; the ones after it were written again.
        #expect(recovered.recoveredRecords.map(\.id) == ["evt-1", "evt-3", "evt-4", "evt-5"])
        #expect(recovered.recoveredRecords.map(\.payload) == ["body 1", "body 3", "body 4", "body 5"].map { Array($0.utf8) })
        #expect(!recovered.contains(id: "evt-2"))
        #expect(recovered.contains(id: "evt-5"))
        #expect(fileSize(path) < originalSize)
        #expect(await recovered.append(id: "evt-6", "six").position != nil)
        recovered.close()

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.isEmpty)
        #expect(reopened.recoveredRecords.map(\.id) == ["evt-1", "evt-3", "evt-4", "evt-5", "evt-6"])
    }

    @Test func rotationSpreadsRecordsOverSegmentsAndRecoveryReadsThemAll() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal, testOptions(segmentSizeLimit: 200))
        var positions: [RecordPosition] = []
        for n in 0..<20 {
            positions.append(try #require(await journal.append(id: "evt-\(n)", payload: Array(repeating: UInt8(n), count: 40)).position))
        }
        #expect(positions == positions.sorted())
        let segments = journal.segments
        #expect(segments.count >= 5)
        #expect(segments == Array(1...UInt64(segments.count)))
        #expect(journal.stats.segmentsCreated == segments.count)
        for sequence in segments {
            #expect(fileSize(segmentPath(dir.journal, sequence)) <= 200 + 80)
        }
        journal.close()

        let reopened = try open(dir.journal, testOptions(segmentSizeLimit: 200))
        #expect(reopened.recoveredRecords.map(\.id) == (0..<20).map { "evt-\($0)" })
        #expect(reopened.recoveredRecords.map(\.position) == positions)
        #expect(reopened.activeSegment == segments.last)
        #expect(await reopened.append(id: "evt-0", "again").isDuplicate)
        reopened.close()
    }

    /// A file the journal did not write, under the name of the segment it is about to
    /// create (a restore, a stray copy), is moved aside with a log line, never written into
    /// or over, and the journal goes on (issue 13, point 4).
    @Test func aForeignFileUnderTheNextSegmentsNameIsMovedAside() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let sink = MemorySink()
        let journal = try open(dir.journal, testOptions(segmentSizeLimit: 200), sink: sink)
        #expect(await journal.append(id: "evt-1", payload: Array(repeating: 1, count: 120)).position != nil)
        let next = segmentPath(dir.journal, journal.activeSegment + 1)
        let foreign = Array("not a journal segment of ours\n".utf8)
        try writeBytes(next, foreign)

        // This batch does not fit the active segment: the journal must rotate into `next`.
        let outcome = await journal.append(id: "evt-2", payload: Array(repeating: 2, count: 120))
        #expect(outcome.position != nil, "the journal stopped writing at a foreign file")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.journal)
        let aside = try #require(names.first { $0.contains(".foreign-") })
        #expect(readBytes(dir.journal + "/" + aside) == foreign)
        #expect(sink.lines.contains { $0.contains("moved it aside") && $0.contains(aside) })
        journal.close()

        let reopened = try open(dir.journal, testOptions(segmentSizeLimit: 200))
        defer { reopened.close() }
        #expect(reopened.recoveredRecords.map(\.id) == ["evt-1", "evt-2"])
    }

    /// Damage in an earlier segment that an open reads (one not sealed: a journal of an older
    /// version, or an unreadable marker) is corruption, not a torn tail. A sealed segment's
    /// damage is found when it is read (`SealAndScanTests`).
    @Test func damageInAnEarlierSegmentIsCorruptionNotATornTail() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal, testOptions(segmentSizeLimit: 150))
        for n in 0..<8 {
            _ = try #require(await journal.append(id: "evt-\(n)", payload: Array(repeating: 1, count: 40)).position)
        }
        journal.close()
        try FileManager.default.removeItem(atPath: dir.journal + "/" + SealedMarker.fileName)
        let first = segmentPath(dir.journal, 1)
        let firstBytes = readBytes(first)
        try writeBytes(first, Array(firstBytes.dropLast(3)))

        let reopened = try open(dir.journal, testOptions(segmentSizeLimit: 150))
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.map(\.kind) == [.corruption])
        #expect(reopened.recoveryIssues.first?.forensicCopy.map(fileExists) == true)
        #expect(reopened.recoveredRecords.count == 7)
    }

    @Test func segmentTornWhileBeingCreatedIsRemoved() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        _ = try #require(await journal.append(id: "evt-1", "one").position)
        journal.close()
        try writeBytes(segmentPath(dir.journal, 2), Array("SRJ".utf8))

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.map(\.kind) == [.tornTail])
        #expect(!fileExists(segmentPath(dir.journal, 2)))
        #expect(reopened.recoveredRecords.map(\.id) == ["evt-1"])
        let position = try #require(await reopened.append(id: "evt-2", "two").position)
        #expect(position.segment == 1)
    }
}
