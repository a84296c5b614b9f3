import Testing
import StoreRelayJournal
import StoreRelaySupport

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
        var options = testOptions(segmentSizeLimit: 100, clock: clock)
        options.dedupeRetention = .seconds(3600)
        let journal = try open(dir.journal, options)
        _ = try #require(await journal.append(id: "old", payload: Array(repeating: 0, count: 80)).position)
        clock.advance(milliseconds: 3_000_000)
        _ = try #require(await journal.append(id: "recent", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "active", payload: Array(repeating: 0, count: 80)).position)
        clock.advance(milliseconds: 1_000_000)
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

    @Test func damagedSnapshotIsMovedAside() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal, testOptions(segmentSizeLimit: 100))
        _ = try #require(await journal.append(id: "a", payload: Array(repeating: 0, count: 80)).position)
        _ = try #require(await journal.append(id: "b", payload: Array(repeating: 0, count: 80)).position)
        _ = try await journal.retire(upTo: 1).get()
        journal.close()
        var bytes = readBytes(dir.journal + "/seen-ids")
        bytes[bytes.count / 2] ^= 0x10
        try writeBytes(dir.journal + "/seen-ids", bytes)

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.map(\.kind) == [.corruptSnapshot])
        #expect(!fileExists(dir.journal + "/seen-ids"))
        #expect(reopened.contains(id: "b"))
    }
}
