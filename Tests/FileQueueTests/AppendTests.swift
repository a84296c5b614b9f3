import Dispatch
import Foundation
import Testing
import StoreRelayStorage
import StoreRelayCore

@Suite struct AppendTests {
    @Test func appendedLineIsInTheOpenSegmentOnceReported() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue)
        #expect(names(dir.queue).isEmpty, "no segment before the first line")
        try await queue.append(#"{"id":"a"}"#)
        #expect(readText(segment(dir.queue, 1, ".jsonl.open")) == "{\"id\":\"a\"}\n")
        #expect(names(dir.queue) == ["00000000000000000001.jsonl.open"])
        #expect(queue.openSequence == 1)
        let stats = queue.stats
        #expect(stats.lines == 1 && stats.batches == 1 && stats.syncs == 1 && stats.bytes == 11)

        try await queue.close()
        #expect(names(dir.queue) == ["00000000000000000001.jsonl"])
        #expect(readText(segment(dir.queue, 1, ".jsonl")) == "{\"id\":\"a\"}\n")
        #expect(queue.stats.segmentsClosed == 1)
    }

    @Test func concurrentAppendsAreAllStoredAsWholeLinesWithFewerSyncs() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue, testOptions(rotateSize: 16 * 1024))
        let producers = 8, perProducer = 250
        let failures = LockedCounter()
        let group = DispatchGroup()
        for producer in 0..<producers {
            let source = DispatchQueue(label: "producer-\(producer)")
            for index in 0..<perProducer {
                group.enter()
                source.async {
                    let line = Array(#"{"id":"p\#(producer)-\#(index)","pad":"\#(String(repeating: "x", count: index % 40))"}"#.utf8)
                    queue.append(line: line) { result in
                        if case .failure = result { failures.increment() }
                        group.leave()
                    }
                }
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: .main) { continuation.resume() } }
        #expect(failures.value == 0)
        try await queue.close()

        var seen: [String] = []
        for name in names(dir.queue) {
            #expect(name.hasSuffix(".jsonl"))
            let lines = try #require(wholeLines(readText(dir.queue + "/" + name)), "\(name) ends mid-line")
            seen += lines
        }
        let expected = (0..<producers).flatMap { p in (0..<perProducer).map { "p\(p)-\($0)" } }
        let ids = seen.map { line -> String in
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: String]
            return object?["id"] ?? "unparseable: \(line)"
        }
        #expect(ids.sorted() == expected.sorted())
        let stats = queue.stats
        #expect(stats.lines == producers * perProducer)
        #expect(stats.syncs < producers * perProducer, "group commit shares syncs")
        #expect(stats.batches < producers * perProducer)
        #expect(names(dir.queue).count > 1, "16 KiB segments rotate")
    }

    @Test func linesWithANewlineOrNothingAreRejected() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue)
        if case .failure(let error) = await queue.outcome("{\"a\":1}\n{\"b\":2}") {
            #expect(error.code == .invalidLine)
        } else {
            Issue.record("a line with a newline was accepted")
        }
        if case .failure(let error) = await queue.outcome("") {
            #expect(error.code == .invalidLine)
        } else {
            Issue.record("an empty line was accepted")
        }
        #expect(names(dir.queue).isEmpty)
        #expect(queue.stats.failures == 2)
        #expect(queue.stats.lines == 0)
        try await queue.close()
    }

    @Test func appendsAfterCloseFailAndEmptyQueueLeavesNoSegment() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue)
        try await queue.close()
        guard case .failure(let error) = await queue.outcome("late") else {
            Issue.record("an append after close succeeded")
            return
        }
        #expect(error.code == .closed)
        #expect(names(dir.queue).isEmpty)
        try await queue.close()
    }

    @Test func appendsQueuedBeforeCloseAreWrittenInOrder() async throws {
        let dir = try TemporaryDirectory()
        defer { dir.remove() }
        let queue = try openQueue(dir.queue)
        let results = ResultsBox()
        for index in 0..<100 {
            queue.append(line: Array("line-\(index)".utf8)) { results.add($0) }
        }
        try await queue.close()
        #expect(await eventually { results.count == 100 })
        #expect(results.failures == 0)
        #expect(readText(segment(dir.queue, 1, ".jsonl")) == (0..<100).map { "line-\($0)\n" }.joined())
    }
}

/// Thread-safe counters for completions that run on the queue's callback queue.
final class LockedCounter: Sendable {
    private let storage = Locked(0)
    func increment() { storage.withLock { $0 += 1 } }
    var value: Int { storage.current }
}

final class ResultsBox: Sendable {
    private let storage = Locked<[Result<Void, StorageError>]>([])
    func add(_ result: Result<Void, StorageError>) { storage.withLock { $0.append(result) } }
    var count: Int { storage.current.count }
    var failures: Int { storage.current.filter { if case .failure = $0 { true } else { false } }.count }
}
