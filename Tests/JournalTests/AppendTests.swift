import Dispatch
import Testing
import StoreRelayStorage
import StoreRelayCore

@Suite struct AppendTests {
    @Test func storedRecordsComeBackAfterReopen() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        let first = try #require(await journal.append(id: "evt-1", "one").position)
        let second = try #require(await journal.append(id: "evt-2", payload: []).position)
        #expect(first.segment == 1 && second.segment == 1 && first.offset < second.offset)
        #expect(journal.contains(id: "evt-1") && !journal.contains(id: "evt-3"))
        #expect(journal.isWritable)
        journal.close()
        #expect(await journal.append(id: "evt-3", "late").error?.code == .closed)

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        let records = reopened.recoveredRecords
        #expect(records.map(\.id) == ["evt-1", "evt-2"])
        #expect(records.map(\.payload) == [Array("one".utf8), []])
        #expect(records.map(\.position) == [first, second])
        #expect(records.allSatisfy { $0.kind == .event })
        #expect(reopened.recoveryIssues.isEmpty)
        #expect(fileExists(segmentPath(dir.journal, 1)))
        reopened.releaseRecoveredRecords()
        #expect(reopened.recoveredRecords.isEmpty)
    }

    /// One journal per directory: a second open fails with `.inUse` (and recovers nothing),
    /// until the first is closed.
    @Test func aDirectoryIsOpenInOneJournalAtATime() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        #expect(await journal.append(id: "evt-1", "one").position != nil)
        let error = #expect(throws: StorageError.self) { try open(dir.journal) }
        #expect(error?.code == .inUse)
        #expect(error?.message.contains("another storerelay serve") == true)
        #expect(await journal.append(id: "evt-2", "two").position != nil)
        journal.close()

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveredRecords.map(\.id) == ["evt-1", "evt-2"])
    }

    @Test func invalidIDsAndOversizedPayloadsAreRefused() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        var options = JournalOptions()
        options.maxPayloadBytes = 10
        let journal = try open(dir.journal, options)
        defer { journal.close() }
        #expect(await journal.append(id: "", "x").error?.code == .invalidID)
        #expect(await journal.append(id: String(repeating: "a", count: 2000), "x").error?.code == .invalidID)
        #expect(await journal.append(id: "big", payload: Array(repeating: 1, count: 11)).error?.code == .recordTooLarge)
        #expect(await journal.append(id: "ok", payload: Array(repeating: 1, count: 10)).position != nil)
    }

    /// 2000 appends from 8 queues: every one stored at its own position, all readable after
    /// reopen, and batched into far fewer syncs than appends.
    @Test func concurrentAppendsShareSyncs() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        let outcomes = Locked<[String: AppendOutcome]>([:])
        let group = DispatchGroup()
        for queueIndex in 0..<8 {
            let queue = DispatchQueue(label: "producer-\(queueIndex)")
            for n in 0..<250 {
                group.enter()
                queue.async {
                    let id = "evt-\(queueIndex)-\(n)"
                    journal.append(id: id, payload: Array("payload \(id)".utf8)) { outcome in
                        outcomes.withLock { $0[id] = outcome }
                        group.leave()
                    }
                }
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        let results = outcomes.current
        #expect(results.count == 2000)
        let positions = results.values.compactMap(\.position)
        #expect(positions.count == 2000)
        #expect(Set(positions).count == 2000)
        let stats = journal.stats
        #expect(stats.appends == 2000)
        #expect(stats.failures == 0 && stats.duplicates == 0)
        #expect(stats.syncs == stats.batches)
        #expect(stats.syncs < 2000, "group commit: \(stats.syncs) syncs for 2000 appends")
        journal.close()

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        let records = reopened.recoveredRecords
        #expect(records.count == 2000)
        for record in records {
            #expect(record.payload == Array("payload \(record.id)".utf8))
            #expect(results[record.id]?.position == record.position)
        }
    }

    /// With the writer held, appends arriving meanwhile must form one batch: one write and
    /// one sync for all of them.
    @Test func appendsDuringASyncFormTheNextBatch() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        defer { journal.close() }
        journal.suspendWriterForTesting()
        let group = DispatchGroup()
        let stored = Locked(0)
        DispatchQueue.concurrentPerform(iterations: 500) { n in
            group.enter()
            journal.append(id: "evt-\(n)", payload: [UInt8(n % 256)]) { outcome in
                if outcome.position != nil { stored.withLock { $0 += 1 } }
                group.leave()
            }
        }
        #expect(journal.contains(id: "evt-499"))
        #expect(journal.stats.batches == 0)
        journal.resumeWriterForTesting()
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(stored.current == 500)
        let stats = journal.stats
        #expect(stats.appends == 500)
        #expect(stats.batches <= 2 && stats.syncs <= 2, "\(stats)")
    }

    @Test func concurrentDuplicatesAreStoredOnce() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        let stored = Locked<[String]>([])
        let duplicates = Locked(0)
        let group = DispatchGroup()
        DispatchQueue.concurrentPerform(iterations: 8) { producer in
            for n in 0..<50 {
                group.enter()
                journal.append(id: "dup-\(n)", payload: [UInt8(producer)]) { outcome in
                    switch outcome {
                    case .stored: stored.withLock { $0.append("dup-\(n)") }
                    case .duplicate: duplicates.withLock { $0 += 1 }
                    case .failed: break
                    }
                    group.leave()
                }
            }
        }
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(stored.current.count == 50)
        #expect(Set(stored.current).count == 50)
        #expect(duplicates.current == 350)
        #expect(journal.stats.duplicates == 350)
        journal.close()

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveredRecords.count == 50)
        #expect(reopened.contains(id: "dup-7"))
        #expect(await reopened.append(id: "dup-7", "again").isDuplicate)
        #expect(await reopened.append(id: "fresh", "new").position != nil)
    }

    @Test func flushWaitsForEarlierAppends() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        defer { journal.close() }
        let done = Locked(0)
        for n in 0..<20 {
            journal.append(id: "f-\(n)", payload: []) { _ in done.withLock { $0 += 1 } }
        }
        await journal.flushed()
        // Completions run in order on one serial queue, and the flush completion after them.
        #expect(done.current == 20)
        #expect(journal.stats.appends == 20)
    }
}
