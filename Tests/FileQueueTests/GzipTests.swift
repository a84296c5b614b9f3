import Testing
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct GzipTests {
    @Test func closedSegmentsBecomeGzipFilesThatGzipReadsBack() async throws {
        try #require(CommandRunner.isAvailable("gzip"), "needs the gzip program")
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue, testOptions(rotateSize: 300 * 1024, compression: .gzip))
        // Varied lines, ~700 KiB in all: several segments, each more than one read chunk.
        let lines = (0..<6000).map { index in
            #"{"id":"evt-\#(index)","type":"DID_RENEW","note":"\#(String(repeating: String(index % 97), count: index % 50))","ü":"é"}"#
        }
        let results = ResultsBox()
        for line in lines { queue.append(line: Array(line.utf8)) { results.add($0) } }
        try await queue.close()
        #expect(results.count == lines.count && results.failures == 0)

        let files = names(dir.queue)
        #expect(files.count >= 2)
        #expect(files.allSatisfy { $0.hasSuffix(".jsonl.gz") }, "only complete .gz files remain: \(files)")
        var decoded: [String] = []
        for name in files {
            let result = try gunzip(dir.queue + "/" + name)
            #expect(result.status == 0, "gzip -d failed: \(result.stderr)")
            decoded += try #require(wholeLines(result.stdout))
        }
        #expect(decoded == lines)
        let stats = queue.stats
        #expect(stats.segmentsCompressed == files.count)
        #expect(stats.compressionFailures == 0)
    }

    @Test func aSegmentClosedForAgeIsCompressedWhileAppendsContinue() async throws {
        try #require(CommandRunner.isAvailable("gzip"), "needs the gzip program")
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        var options = testOptions(compression: .gzip, clock: clock)
        options.ageCheckInterval = .seconds(3600)
        let queue = try openQueue(dir.queue, options)
        try await queue.append("one")
        clock.advance(by: .seconds(61 * 60))
        await queue.checkAgeForTesting()
        try await queue.append("two")
        let compressed = segment(dir.queue, 1, ".jsonl.gz")
        #expect(await eventually { fileExists(compressed) && !fileExists(segment(dir.queue, 1, ".jsonl")) })
        #expect(try gunzip(compressed).stdout == "one\n")
        try await queue.close()
        #expect(try gunzip(segment(dir.queue, 2, ".jsonl.gz")).stdout == "two\n")
    }
}
