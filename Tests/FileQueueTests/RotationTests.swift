import StoreRelayTestSupport
import Testing
import StoreRelayStorage
import StoreRelayCore

@Suite struct RotationTests {
    /// 29-byte lines plus newline: three fit in a 100-byte segment, a fourth would not.
    private func line(_ index: Int) -> String {
        let text = "line-\(index)"
        return text + String(repeating: ".", count: 29 - text.count)
    }

    @Test func segmentIsClosedBeforeAWriteWouldExceedTheSize() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue, testOptions(rotateSize: 100))
        for index in 0..<10 { try await queue.append(line(index)) }
        #expect(names(dir.queue) == [
            "00000000000000000001.jsonl", "00000000000000000002.jsonl",
            "00000000000000000003.jsonl", "00000000000000000004.jsonl.open",
        ])
        for sequence in 1...3 {
            let text = readText(segment(dir.queue, UInt64(sequence), ".jsonl"))
            #expect(text.utf8.count == 90)
            #expect(wholeLines(text) == (3 * (sequence - 1)..<3 * sequence).map(line))
        }
        #expect(queue.stats.segmentsClosed == 3)
        try await queue.close()
    }

    @Test func oneBatchIsSplitAtLineBoundariesAcrossSegments() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue, testOptions(rotateSize: 100))
        let results = ResultsBox()
        for index in 0..<30 { queue.append(line: Array(line(index).utf8)) { results.add($0) } }
        try await queue.close()
        #expect(results.failures == 0)
        var all: [String] = []
        for name in names(dir.queue) {
            let text = readText(dir.queue + "/" + name)
            #expect(text.utf8.count <= 100, "\(name) exceeds the rotation size")
            all += try #require(wholeLines(text))
        }
        #expect(all == (0..<30).map(line))
    }

    @Test func aLineLargerThanTheSizeGetsASegmentOfItsOwn() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue, testOptions(rotateSize: 100))
        try await queue.append("small")
        let big = String(repeating: "b", count: 250)
        try await queue.append(big)
        try await queue.append("after")
        try await queue.close()
        #expect(readText(segment(dir.queue, 1, ".jsonl")) == "small\n")
        #expect(readText(segment(dir.queue, 2, ".jsonl")) == big + "\n")
        #expect(readText(segment(dir.queue, 3, ".jsonl")) == "after\n")
    }

    @Test func segmentOlderThanTheAgeIsClosedAndEmptyOnesNeverAre() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        var options = testOptions(rotateAge: .seconds(3600), clock: clock)
        options.ageCheckInterval = .seconds(3600)  // only the explicit checks below run
        let queue = try openQueue(dir.queue, options)
        try await queue.append("first")
        clock.advance(by: .seconds(59 * 60))
        await queue.checkAgeForTesting()
        #expect(names(dir.queue) == ["00000000000000000001.jsonl.open"])
        clock.advance(by: .seconds(1 * 60))
        await queue.checkAgeForTesting()
        #expect(names(dir.queue) == ["00000000000000000001.jsonl"])
        #expect(queue.openSequence == nil)

        clock.advance(by: .seconds(180 * 60))
        await queue.checkAgeForTesting()
        #expect(names(dir.queue) == ["00000000000000000001.jsonl"], "no empty segment appears or rotates")

        try await queue.append("second")
        #expect(queue.openSequence == 2)
        clock.advance(by: .seconds(30 * 60))
        await queue.checkAgeForTesting()
        #expect(names(dir.queue) == ["00000000000000000001.jsonl", "00000000000000000002.jsonl.open"],
                "age counts from the segment's own creation")
        try await queue.close()
    }

    @Test func theAgeTimerClosesAnOldSegment() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let clock = ManualClock()
        var options = testOptions(rotateAge: .seconds(3600), clock: clock)
        options.ageCheckInterval = .milliseconds(10)
        let queue = try openQueue(dir.queue, options)
        try await queue.append("quiet traffic")
        clock.advance(by: .seconds(61 * 60))
        let closed = segment(dir.queue, 1, ".jsonl")
        #expect(await eventually { fileExists(closed) })
        #expect(readText(closed) == "quiet traffic\n")
        try await queue.append("next")
        #expect(fileExists(segment(dir.queue, 2, ".jsonl.open")))
        try await queue.close()
    }
}
