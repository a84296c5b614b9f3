import StoreRelayTestSupport
import Testing
@testable import StoreRelayStorage
import Foundation
import StoreRelayCore

/// `seen-ids.index`: the saved filter and fences an open loads instead of reading every id,
/// and ignores whenever it does not describe `seen-ids` as it is.
@Suite struct RetiredIDIndexFileTests {
    /// A journal whose 30 first ids are sealed into `seen-ids` (150-byte segments).
    func sealed(_ dir: TemporaryDirectory, ids: Range<Int>) async throws {
        let journal = try Journal.open(directory: dir.journal, options: testOptions(segmentSizeLimit: 150), logger: .disabled)
        for n in ids { _ = try #require(await journal.append(id: "evt-\(n)", payload: Array(repeating: 1, count: 40)).position) }
        journal.close()
    }

    func expectRemembered(_ dir: TemporaryDirectory, _ ids: Range<Int>) async throws {
        let journal = try Journal.open(directory: dir.journal, options: testOptions(segmentSizeLimit: 150), logger: .disabled)
        defer { journal.close() }
        for n in ids { #expect(journal.contains(id: "evt-\(n)"), "evt-\(n)") }
        for n in 0..<200 { #expect(!journal.contains(id: "never-\(n)")) }
    }

    @Test func anOpenLoadsTheSavedIndexAndItAnswersAsTheFileWould() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        try await sealed(dir, ids: 0..<30)
        let path = dir.journal + "/" + RetiredIDIndexFile.fileName
        #expect(fileExists(path))
        let file = try ReadOnlyFile(path: dir.journal + "/seen-ids")
        let loaded = try #require(RetiredIDIndexFile.load(directory: dir.journal, file: file, length: fileSize(dir.journal + "/seen-ids")))
        #expect(loaded.count >= 25)
        for n in 0..<25 where loaded.lookup(EventIDDigest("evt-\(n)")) != .present {
            // Only the newest segment's ids are not sealed yet.
            #expect(n >= 20, "evt-\(n) sealed but not found through the loaded index")
        }
        #expect(loaded.lookup(EventIDDigest("never")) == .absent)
        try await expectRemembered(dir, 0..<30)
    }

    @Test func aDamagedOrStaleIndexIsIgnored() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let path = dir.journal + "/" + RetiredIDIndexFile.fileName
        try await sealed(dir, ids: 0..<20)
        let stale = readBytes(path)
        try await sealed(dir, ids: 20..<40)
        // An index saved for an earlier seen-ids (as a crash before the next save leaves it).
        try writeBytes(path, stale)
        try await expectRemembered(dir, 0..<40)
        // Torn, garbage, or cut short: each ignored, and the file read whole.
        for damaged in [Array(stale.dropLast(10)), Array("garbage".utf8), stale.map { $0 ^ 0x5A }, []] {
            try writeBytes(path, damaged)
            try await expectRemembered(dir, 0..<40)
        }
    }

    @Test func encodingRoundTripsAndRefusesAnyCut() throws {
        var filter = DigestBloomFilter(capacity: 2000)
        let digests = (0..<300).map { EventIDDigest("id-\($0)") }.sorted()
        for digest in digests { filter.insert(digest) }
        let chunk = RetiredIDIndex.Chunk(digests.map { ($0, Int64(1_700_000_000_000)) }, at: 12)!
        let index = RetiredIDIndex(chunks: [chunk], appendedChunks: 1, filter: filter, count: 300, oldestFirstSeen: 1_700_000_000_000, file: nil)
        let bytes = RetiredIDIndexFile.encode(index, length: 12 + 300 * 24 + 4, lastChecksum: 0xABCD)
        let saved = try #require(RetiredIDIndexFile.decode(bytes))
        #expect(saved.count == 300 && saved.appendedChunks == 1 && saved.oldestFirstSeen == 1_700_000_000_000)
        #expect(saved.length == 12 + 300 * 24 + 4 && saved.lastChecksum == 0xABCD)
        #expect(saved.filter.storage == filter.storage && saved.filter.count == 300)
        #expect(saved.chunks.first?.fences == chunk.fences && saved.chunks.first?.first == chunk.first)
        for cut in stride(from: 0, to: bytes.count, by: 97) {
            #expect(RetiredIDIndexFile.decode(Array(bytes[0..<cut])) == nil)
        }
    }
}
