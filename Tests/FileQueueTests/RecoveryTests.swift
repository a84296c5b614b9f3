import Foundation
import Testing
import StoreRelayStorage
import StoreRelayCore
import StoreRelayTestSupport

@Suite struct RecoveryTests {
    @Test func partialLastLineIsCutAndTheOpenSegmentClosed() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.queue, withIntermediateDirectories: true)
        try writeText(segment(dir.queue, 2, ".jsonl"), "old\n")
        try writeText(segment(dir.queue, 3, ".jsonl.open"), "{\"id\":\"a\"}\n{\"id\":\"b\"}\n{\"id\":\"trunc")

        let queue = try openQueue(dir.queue)
        #expect(queue.recovery.closedSegments == [3])
        #expect(queue.recovery.discardedBytes == "{\"id\":\"trunc".utf8.count)
        #expect(queue.recovery.lastSequence == 3)
        #expect(readText(segment(dir.queue, 3, ".jsonl")) == "{\"id\":\"a\"}\n{\"id\":\"b\"}\n")
        #expect(readText(segment(dir.queue, 2, ".jsonl")) == "old\n")
        #expect(queue.stats.segmentsClosed == 1)

        try await queue.append("{\"id\":\"c\"}")
        #expect(names(dir.queue) == [
            "00000000000000000002.jsonl", "00000000000000000003.jsonl", "00000000000000000004.jsonl.open",
        ])
        try await queue.close()
        #expect(readText(segment(dir.queue, 4, ".jsonl")) == "{\"id\":\"c\"}\n")
    }

    @Test func anOpenSegmentWithNoWholeLineIsRemoved() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.queue, withIntermediateDirectories: true)
        try writeText(segment(dir.queue, 7, ".jsonl.open"), "{\"never\":\"synced")
        let queue = try openQueue(dir.queue)
        #expect(names(dir.queue).isEmpty)
        #expect(queue.recovery.removedFiles == ["00000000000000000007.jsonl.open"])
        try await queue.append("x")
        #expect(queue.openSequence == 8, "the sequence of a removed segment is not reused")
        try await queue.close()
    }

    @Test func leftoverTemporaryFilesAreRemovedAndCompressionRedone() async throws {
        try #require(CommandRunner.isAvailable("gzip"), "needs the gzip program")
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(atPath: dir.queue, withIntermediateDirectories: true)
        // Crash during compression of 5: the .tmp is half written, the .jsonl intact.
        try writeText(segment(dir.queue, 5, ".jsonl"), "five-a\nfive-b\n")
        try writeText(segment(dir.queue, 5, ".jsonl.gz.tmp"), "\u{1f}\u{8b}half")
        // Crash after 6's .gz was renamed into place but before the .jsonl was removed.
        let six = segment(dir.queue, 6, ".jsonl")
        try writeText(six, "six\n")
        #expect(try CommandRunner.run("gzip", ["-k", six]).status == 0)
        // A stray .tmp of the sequence file.
        try writeText(dir.queue + "/.sequence.tmp", "12")
        // A consumer's own file is left alone.
        try writeText(dir.queue + "/consumer-offsets.txt", "5")

        let queue = try openQueue(dir.queue, testOptions(compression: .gzip))
        #expect(Set(queue.recovery.removedFiles) == [
            "00000000000000000005.jsonl.gz.tmp", "00000000000000000006.jsonl", ".sequence.tmp",
        ])
        try await queue.close()  // waits for the redone compression
        #expect(names(dir.queue) == [
            "00000000000000000005.jsonl.gz", "00000000000000000006.jsonl.gz", "consumer-offsets.txt",
        ])
        #expect(try gunzip(segment(dir.queue, 5, ".jsonl.gz")).stdout == "five-a\nfive-b\n")
        #expect(try gunzip(segment(dir.queue, 6, ".jsonl.gz")).stdout == "six\n")
        #expect(queue.stats.segmentsCompressed == 1)
    }

    @Test func sequencesKeepRisingAfterConsumersDeleteEverySegment() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let first = try openQueue(dir.queue, testOptions(rotateSize: 10))
        for index in 0..<3 { try await first.append("event-\(index)") }
        try await first.close()
        #expect(names(dir.queue).count == 3)
        for name in names(dir.queue) { try FileManager.default.removeItem(atPath: dir.queue + "/" + name) }

        let second = try openQueue(dir.queue)
        #expect(second.recovery.lastSequence == 3)
        try await second.append("event-3")
        #expect(second.openSequence == 4)
        try await second.close()
    }

    @Test func aQueueReopenedAfterAnUncleanStopKeepsEveryReportedLine() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        var reported: [String] = []
        do {
            // Dropped without close, as a crash would leave it: the segment stays `.open`.
            let queue = try openQueue(dir.queue)
            for index in 0..<20 {
                try await queue.append("kept-\(index)")
                reported.append("kept-\(index)")
            }
        }
        #expect(names(dir.queue) == ["00000000000000000001.jsonl.open"])
        let reopened = try openQueue(dir.queue)
        #expect(reopened.recovery.closedSegments == [1])
        #expect(reopened.recovery.discardedBytes == 0)
        #expect(wholeLines(readText(segment(dir.queue, 1, ".jsonl"))) == reported)
        try await reopened.close()
    }
}
