import StoreRelayTestSupport
import Testing
@testable import StoreRelayStorage
import Foundation
import StoreRelayCore

/// The on-disk index of retired ids (`seen-ids`): lookups, merges, migration from unsorted
/// chunks, and the memory it takes.
@Suite struct RetiredIDIndexTests {
    static func digests(_ count: Int, seed: UInt64) -> [EventIDDigest] {
        var generator = SeededGenerator(seed: seed)
        return (0..<count).map { _ in EventIDDigest(high: generator.next(), low: generator.next()) }
    }

    /// Every id written is found; ids never written are not, including those the Bloom
    /// filter lets through (which must be settled by the read, never guessed).
    @Test func findsExactlyWhatTheFileHolds() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.journal, withIntermediateDirectories: true)
        var present = Self.digests(150_000, seed: 1)
        // Equal first halves across fence blocks: the search must look past one block.
        for index in 0..<300 { present.append(EventIDDigest(high: 42, low: UInt64(index))) }
        let entries = present.map { (digest: $0, firstSeen: Int64(1_000)) }
        let made = try DedupeSnapshot.compact(merging: .empty, extra: entries, cutoff: 0, directory: dir.journal)
        #expect(made.index.count == present.count)
        #expect(made.index.chunks.count == 3, "150,300 entries in chunks of 65,536")
        for (a, b) in zip(made.index.chunks, made.index.chunks.dropFirst()) { #expect(a.last < b.first) }
        for digest in present { #expect(made.index.lookup(digest) == .present) }
        let absent = Self.digests(200_000, seed: 2)
        var passedTheFilter = 0
        for digest in absent {
            if made.index.filter.mightContain(digest) { passedTheFilter += 1 }
            #expect(made.index.lookup(digest) == .absent)
        }
        #expect(passedTheFilter > 0 && passedTheFilter < 6_000, "false positives: \(passedTheFilter) of 200,000")
        #expect(made.index.lookup(EventIDDigest(high: 42, low: 300)) == .absent)

        // About 11 bits an id: a dictionary of them took over 400.
        #expect(made.index.memoryBytes * 8 / present.count <= 14, "\(made.index.memoryBytes) bytes for \(present.count) ids")

        // The same file, scanned as a journal opening it does, answers the same.
        let scan = try #require(try DedupeSnapshot.scan(path: dir.journal + "/seen-ids", cutoff: 0))
        #expect(!scan.needsRewrite)
        #expect(scan.index.count == present.count)
        for digest in present.prefix(1_000) { #expect(scan.index.lookup(digest) == .present) }
        for digest in absent.prefix(1_000) { #expect(scan.index.lookup(digest) == .absent) }
    }

    /// A compaction merges chunks into disjoint sorted ones, keeps an id once with its latest
    /// first-seen time, and drops what is past the retention.
    @Test func compactionMergesDeduplicatesAndExpires() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.journal, withIntermediateDirectories: true)
        let shared = EventIDDigest("twice")
        let old = EventIDDigest("old")
        var made = try DedupeSnapshot.compact(merging: .empty, extra: [(shared, 10), (old, 1)], cutoff: 0, directory: dir.journal)
        var length = made.length
        var index = made.index
        for (round, digests) in [Self.digests(500, seed: 3), Self.digests(500, seed: 4)].enumerated() {
            let entries = (digests.map { (digest: $0, firstSeen: Int64(100)) } + (round == 1 ? [(digest: shared, firstSeen: Int64(20))] : []))
                .sorted { $0.digest < $1.digest }
            let newLength = try DedupeSnapshot.append(entries, directory: dir.journal, at: length)
            index = index.adding(entries, at: length + 4, file: nil)
            length = newLength
        }
        #expect(index.chunks.count == 3 && index.count == 1_003)
        made = try DedupeSnapshot.compact(merging: index, cutoff: 5, directory: dir.journal)
        #expect(made.dropped == 1)
        #expect(made.index.count == 1_001, "the shared id once, the old one gone")
        #expect(made.index.chunks.count == 1)
        #expect(made.index.lookup(shared) == .present && made.index.lookup(old) == .absent)
        let bytes = try JournalFiles.readAll(dir.journal + "/seen-ids")
        let contents = try #require(DedupeSnapshot.decode(bytes))
        #expect(contents.entries.first { $0.digest == shared }?.firstSeen == 20)
        #expect(contents.entries.map(\.digest) == contents.entries.map(\.digest).sorted())
        #expect(made.length == bytes.count)
    }

    /// A `seen-ids` written before chunks were sorted is rewritten sorted when the journal
    /// opens, and every id in it is still a duplicate.
    @Test func unsortedChunksFromAnOlderStoreRelayAreRewritten() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.journal, withIntermediateDirectories: true)
        let ids = (0..<200).map { "legacy-\($0)" }
        let now = ManualClock().now().milliseconds
        // What the older code wrote: one chunk in retirement order, not sorted.
        var chunk: [UInt8] = []
        chunk.appendLittleEndian(UInt32(ids.count))
        for id in ids {
            let digest = EventIDDigest(id)
            chunk.appendLittleEndian(digest.high)
            chunk.appendLittleEndian(digest.low)
            chunk.appendLittleEndian(UInt64(bitPattern: now))
        }
        let crc = chunk.withUnsafeBytes { RecordFrame.checksum($0) }
        chunk.appendLittleEndian(crc)
        try Data(DedupeSnapshot.header() + chunk).write(to: URL(fileURLWithPath: dir.journal + "/seen-ids"))
        let scan = try #require(try DedupeSnapshot.scan(path: dir.journal + "/seen-ids", cutoff: 0))
        #expect(scan.unsortedChunks.count == 1 && scan.needsRewrite)

        let journal = try open(dir.journal, testOptions(clock: ManualClock()))
        defer { journal.close() }
        for id in ids { #expect(journal.contains(id: id)) }
        #expect(await journal.append(id: "legacy-7", "again").isDuplicate)
        #expect(await journal.append(id: "new-one", "new").position != nil)
        let rewritten = try #require(try DedupeSnapshot.scan(path: dir.journal + "/seen-ids", cutoff: 0))
        #expect(rewritten.unsortedChunks.isEmpty && rewritten.index.count == ids.count)
    }

    /// Many retirements append many chunks; past `RetiredIDsFile.mostAppendedChunks` they are merged,
    /// and every retired id stays a duplicate through it and after a restart.
    @Test func manyRetirementsAreMergedAndStillRemembered() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        let options = testOptions(segmentSizeLimit: 120, clock: clock)
        let journal = try open(dir.journal, options)
        var ids: [String] = []
        for round in 0..<(RetiredIDsFile.mostAppendedChunks * 2 + 6) {
            for n in 0..<2 {
                let id = "r\(round)-\(n)"
                ids.append(id)
                _ = try #require(await journal.append(id: id, payload: Array(repeating: 1, count: 60)).position)
            }
            _ = try await journal.retire(upTo: journal.activeSegment - 1).get()
        }
        let (chunks, appended) = journal.state.withLock { ($0.retired.chunks.count, $0.retired.appendedChunks) }
        #expect(appended <= RetiredIDsFile.mostAppendedChunks, "\(appended) appended chunks")
        #expect(chunks <= RetiredIDsFile.mostAppendedChunks + 1, "\(chunks) chunks")
        for id in ids { #expect(journal.contains(id: id), "\(id)") }
        #expect(await journal.append(id: ids[3], "again").isDuplicate)
        journal.close()
        let reopened = try open(dir.journal, options)
        defer { reopened.close() }
        for id in ids { #expect(reopened.contains(id: id), "\(id) after a restart") }
    }

    /// A run of equal first halves in the middle of a chunk, starting in the tail of a block
    /// whose fence is lower: the search must walk back to that block.
    @Test func equalFirstHalvesInTheMiddleOfAChunkAreFound() throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.journal, withIntermediateDirectories: true)
        var digests = (0..<1_000).map { EventIDDigest(high: UInt64($0) * 10, low: 0) }
        // 300 entries with high 5_005, between entries 500 (5_000) and 501 (5_010): they start in
        // the block of entries 384..511 and run on over the next fences.
        digests += (0..<300).map { EventIDDigest(high: 5_005, low: UInt64($0)) }
        let made = try DedupeSnapshot.compact(merging: .empty, extra: digests.map { ($0, Int64(1)) }, cutoff: 0, directory: dir.journal)
        for low in 0..<300 { #expect(made.index.lookup(EventIDDigest(high: 5_005, low: UInt64(low))) == .present, "\(low)") }
        #expect(made.index.lookup(EventIDDigest(high: 5_005, low: 300)) == .absent)
        for digest in digests.prefix(1_000) { #expect(made.index.lookup(digest) == .present) }
    }

    /// When the read that would settle a "maybe" fails, the index says so, and the journal
    /// refuses the append (Apple gets a 503 and retries) rather than call it a duplicate.
    @Test func aFailedReadIsNeitherADuplicateNorNew() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal, testOptions(clock: ManualClock()))
        defer { journal.close() }
        let digests = (0..<100).map { EventIDDigest("broken-\($0)") }
        let scratch = dir.journal + "-scratch"
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        let made = try DedupeSnapshot.compact(merging: .empty, extra: digests.map { ($0, Int64(1_800_000_000_000)) }, cutoff: 0,
                                              directory: scratch)
        // Its descriptor is closed under it: every read fails.
        let file = try #require(made.index.file)
        close(file.descriptor)
        #expect(made.index.lookup(digests[0]) == .unknown)
        journal.state.withLock { $0.retired = made.index }
        let outcome = await journal.append(id: "broken-0", "payload")
        guard case .failed = outcome else {
            Issue.record("an append whose dedupe could not be settled was \(outcome)")
            return
        }
        // An id the filter rules out needs no read, and is stored.
        let fresh = try #require((0..<1_000).map { "fresh-\($0)" }.first { !made.index.filter.mightContain(EventIDDigest($0)) })
        #expect(await journal.append(id: fresh, "payload").position != nil)
    }
}
