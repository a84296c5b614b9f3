import StoreRelayTestSupport
import Testing
@testable import StoreRelayStorage
import Foundation
import StoreRelayCore

@Suite struct RetireTests {
    @Test func retiredSegmentsAreDeletedButTheirIDsStayDuplicates() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let options = testOptions(segmentSizeLimit: 150, clock: clock)
        let journal = try open(dir.journal, options)
        for n in 0..<10 {
            _ = try #require(await journal.append(id: "evt-\(n)", payload: Array(repeating: 2, count: 40)).position)
        }
        let before = journal.segments
        let active = journal.activeSegment
        #expect(before.count >= 3)
        let retired = try await journal.retire(upTo: UInt64.max).get()
        #expect(retired == before.filter { $0 < active })
        #expect(journal.segments == [active])
        for sequence in retired { #expect(!fileExists(segmentPath(dir.journal, sequence))) }
        #expect(fileExists(dir.journal + "/seen-ids"))
        #expect(!fileExists(dir.journal + "/seen-ids.tmp"))
        #expect(await journal.append(id: "evt-0", "again").isDuplicate)
        journal.close()

        let reopened = try open(dir.journal, options)
        defer { reopened.close() }
        let liveIDs = reopened.recoveredRecords.map(\.id)
        #expect(!liveIDs.isEmpty && liveIDs.count < 10)
        #expect(!liveIDs.contains("evt-0"))
        for n in 0..<10 { #expect(reopened.contains(id: "evt-\(n)")) }
        #expect(await reopened.append(id: "evt-0", "again").isDuplicate)
        #expect(await reopened.append(id: "evt-10", "new").position != nil)
    }

    @Test func idsOlderThanTheRetentionAreForgotten() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let options = testOptions(segmentSizeLimit: 100, clock: clock, dedupeRetention: .seconds(3600))
        let journal = try open(dir.journal, options)
        _ = try #require(await journal.append(id: "old", payload: Array(repeating: 0, count: 80)).position)
        clock.advance(by: .seconds(3_000))
        _ = try #require(await journal.append(id: "recent", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "active", payload: Array(repeating: 0, count: 80)).position)
        clock.advance(by: .seconds(1_000))
        #expect(try await journal.retire(upTo: journal.activeSegment - 1).get().count == 2)
        #expect(!journal.contains(id: "old"))
        #expect(journal.contains(id: "recent"))
        journal.close()

        let reopened = try open(dir.journal, options)
        defer { reopened.close() }
        #expect(reopened.contains(id: "recent"))
        #expect(!reopened.contains(id: "old"))
        #expect(await reopened.append(id: "old", "seen again after the retention").position != nil)
    }

    @Test func eachRetirementAppendsItsIDsAndEveryOneSurvivesARestart() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let options = testOptions(segmentSizeLimit: 100)
        let journal = try open(dir.journal, options)
        var sizes: [Int] = []
        for n in 0..<4 {
            _ = try #require(await journal.append(id: "evt-\(n)", payload: Array(repeating: 0, count: 80)).position)
            _ = try #require(await journal.append(id: "next-\(n)", payload: Array(repeating: 0, count: 80)).position)
            #expect(try await journal.retire(upTo: journal.activeSegment - 1).get().count >= 1)
            sizes.append(readBytes(dir.journal + "/seen-ids").count)
        }
        // One chunk per retirement, each appended after the last: the file only grows.
        #expect(sizes == sizes.sorted() && Set(sizes).count == sizes.count)
        journal.close()

        let reopened = try open(dir.journal, options)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.isEmpty)
        for n in 0..<4 { #expect(reopened.contains(id: "evt-\(n)")) }
        #expect(await reopened.append(id: "evt-2", "again").isDuplicate)
    }

    @Test func aSnapshotCutShortKeepsItsIntactChunks() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let options = testOptions(segmentSizeLimit: 100)
        let journal = try open(dir.journal, options)
        _ = try #require(await journal.append(id: "a", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "b", payload: Array(repeating: 0, count: 80)).position)
        _ = try await journal.retire(upTo: journal.activeSegment - 1).get()
        journal.close()
        // A crash in the middle of the next retirement's append: half a chunk at the end.
        let path = dir.journal + "/seen-ids"
        try writeBytes(path, readBytes(path) + Array(DedupeSnapshot.chunk([(EventIDDigest("c"), 1)]).prefix(13)))

        let reopened = try open(dir.journal, options)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.map(\.kind) == [.tornSnapshotTail])
        #expect(reopened.contains(id: "a"))
        #expect(try #require(DedupeSnapshot.decode(readBytes(path))).intactLength == readBytes(path).count)
    }

    @Test func aDamagedChunkInTheMiddleCostsOnlyItsOwnIDs() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.journal, withIntermediateDirectories: true)
        let clock = ManualClock()
        let now = clock.now().milliseconds
        var middle = DedupeSnapshot.chunk([(EventIDDigest("middle"), now)])
        middle[6] ^= 0x20
        let path = dir.journal + "/seen-ids"
        try writeBytes(path, DedupeSnapshot.header() + DedupeSnapshot.chunk([(EventIDDigest("first"), now)]) + middle
                             + DedupeSnapshot.chunk([(EventIDDigest("last"), now)]))

        let journal = try open(dir.journal, testOptions(clock: clock))
        defer { journal.close() }
        let issue = try #require(journal.recoveryIssues.first)
        #expect(journal.recoveryIssues.count == 1 && issue.kind == .corruptSnapshot)
        #expect(fileExists(try #require(issue.forensicCopy)))
        #expect(journal.contains(id: "first") && journal.contains(id: "last"))
        #expect(!journal.contains(id: "middle"))
        let rewritten = try #require(DedupeSnapshot.decode(readBytes(path)))
        #expect(!rewritten.skippedDamage && rewritten.entries.count == 2)
    }

    /// `close` returns only once retirements already asked for are carried out.
    @Test func closeWaitsForARetirementInProgress() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal, testOptions(segmentSizeLimit: 100))
        _ = try #require(await journal.append(id: "a", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "b", payload: Array(repeating: 0, count: 80)).position)
        let first = journal.activeSegment - 1
        journal.retireSegments(upTo: first) { _ in }
        journal.close()
        #expect(!fileExists(segmentPath(dir.journal, first)))
        let contents = try #require(DedupeSnapshot.decode(readBytes(dir.journal + "/seen-ids")))
        #expect(contents.entries.map(\.digest) == [EventIDDigest("a")])
    }

    @Test func aVersionOneSnapshotIsReadAndRewritten() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.journal, withIntermediateDirectories: true)
        let clock = ManualClock()
        let path = dir.journal + "/seen-ids"
        try writeBytes(path, versionOneSnapshot(["old-a": clock.now().milliseconds, "old-b": clock.now().milliseconds]))

        let journal = try open(dir.journal, testOptions(clock: clock))
        defer { journal.close() }
        #expect(journal.recoveryIssues.isEmpty)
        #expect(journal.contains(id: "old-a") && journal.contains(id: "old-b"))
        #expect(await journal.append(id: "old-a", "again").isDuplicate)
        let rewritten = try #require(DedupeSnapshot.decode(readBytes(path)))
        #expect(!rewritten.isOldVersion && rewritten.entries.count == 2)
    }

    @Test func expiredIDsLeaveTheSnapshotFileToo() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let options = testOptions(segmentSizeLimit: 100, clock: clock, dedupeRetention: .seconds(3600))
        let journal = try open(dir.journal, options)
        defer { journal.close() }
        _ = try #require(await journal.append(id: "early", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "filler", payload: Array(repeating: 0, count: 80)).position)
        _ = try await journal.retire(upTo: journal.activeSegment - 1).get()
        let path = dir.journal + "/seen-ids"
        #expect(try #require(DedupeSnapshot.decode(readBytes(path))).entries.count == 1)

        // Two hours on, "early" is past the retention; the next retirement drops it.
        clock.advance(by: .seconds(7_200))
        _ = try #require(await journal.append(id: "late", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "later", payload: Array(repeating: 0, count: 80)).position)
        _ = try await journal.retire(upTo: journal.activeSegment - 1).get()
        let left = try #require(DedupeSnapshot.decode(readBytes(path)))
        #expect(!left.entries.contains { $0.digest == EventIDDigest("early") })
        #expect(left.entries.map(\.digest) == [EventIDDigest("late")])
        #expect(!journal.contains(id: "early"))
        #expect(journal.contains(id: "late"))
    }

    /// The layout `seen-ids` had before chunks: a whole rewrite, ids as text.
    private func versionOneSnapshot(_ entries: [String: Int64]) -> [UInt8] {
        var out = Array("SRSI".utf8)
        func append<T: FixedWidthInteger>(_ value: T) { withUnsafeBytes(of: value.littleEndian) { out += $0 } }
        append(UInt32(1))
        append(UInt64(entries.count))
        for (id, firstSeen) in entries.sorted(by: { $0.key < $1.key }) {
            append(firstSeen)
            append(UInt16(id.utf8.count))
            out += Array(id.utf8)
        }
        append(out.withUnsafeBytes { RecordFrame.checksum($0) })
        return out
    }

    @Test func snapshotWithAnUnreadableHeaderIsMovedAside() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal, testOptions(segmentSizeLimit: 100))
        _ = try #require(await journal.append(id: "a", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "b", payload: Array(repeating: 0, count: 80)).position)
        _ = try await journal.retire(upTo: 1).get()
        journal.close()
        var bytes = readBytes(dir.journal + "/seen-ids")
        bytes[5] ^= 0x10
        try writeBytes(dir.journal + "/seen-ids", bytes)

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.map(\.kind) == [.corruptSnapshot])
        // Moved aside, and a fresh one started in its place.
        #expect(try #require(DedupeSnapshot.decode(readBytes(dir.journal + "/seen-ids"))).entries.isEmpty)
        #expect(reopened.contains(id: "b"))
    }
}
