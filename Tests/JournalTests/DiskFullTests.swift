import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing
import StoreRelayStorage
import StoreRelayCore

/// Disk full through /dev/full: the journal's batch bytes go there (real `pwrite`, real
/// ENOSPC) while everything else stays on the real segment.
@Suite struct DiskFullTests {
    @Test func failedBatchIsReportedForgottenAndRecoveredFrom() async throws {
        try #require(fileExists("/dev/full"), "needs /dev/full")
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        _ = try #require(await journal.append(id: "before", "stored").position)
        let path = segmentPath(dir.journal, 1)
        let goodSize = fileSize(path)

        try journal.redirectWritesForTesting(to: "/dev/full")
        let error = try #require(await journal.append(id: "during", "lost").error)
        #expect(error.code == .io)
        #expect(error.errno == ENOSPC)
        #expect(error.path == path)
        #expect(!journal.isWritable)
        #expect(!journal.contains(id: "during"))
        #expect(fileSize(path) == goodSize)
        #expect(await journal.append(id: "during", "still lost").error?.errno == ENOSPC)
        #expect(journal.stats.failures == 2)

        try journal.redirectWritesForTesting(to: nil)
        let position = try #require(await journal.append(id: "during", "stored now").position)
        #expect(position.offset == goodSize)
        #expect(journal.isWritable)
        journal.close()

        let reopened = try open(dir.journal)
        defer { reopened.close() }
        #expect(reopened.recoveryIssues.isEmpty)
        #expect(reopened.recoveredRecords.map(\.id) == ["before", "during"])
        #expect(reopened.recoveredRecords.last?.payload == Array("stored now".utf8))
    }

    @Test func newSegmentOnAFullDiskIsNotLeftBehind() async throws {
        try #require(fileExists("/dev/full"), "needs /dev/full")
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try open(dir.journal)
        try journal.redirectWritesForTesting(to: "/dev/full")
        #expect(await journal.append(id: "first", "x").error?.errno == ENOSPC)
        #expect(!fileExists(segmentPath(dir.journal, 1)))
        #expect(journal.segments.isEmpty)
        try journal.redirectWritesForTesting(to: nil)
        #expect(await journal.append(id: "first", "x").position?.segment == 1)
        journal.close()
    }

    /// A second append of an id whose first append fails is retried as a fresh append
    /// rather than answered duplicate.
    @Test func waiterOnAFailedAppendIsRetriedForReal() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try await journalFailingItsNextBatch(in: dir)
        defer { journal.close() }
        let outcomes = Locked<[Int: AppendOutcome]>([:])
        let group = DispatchGroup()
        for n in 0..<2 {
            group.enter()
            journal.append(id: "same", payload: [UInt8(n)]) { outcome in
                outcomes.withLock { $0[n] = outcome }
                group.leave()
            }
        }
        // Both appends reached the state queue; the first batch waits at the held writer.
        #expect(journal.contains(id: "same"))
        journal.queueWriteRedirectForTesting(to: nil)
        journal.resumeWriterForTesting()
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(outcomes.current[0]?.error?.errno == ENOSPC)
        #expect(outcomes.current[1]?.position != nil)
        #expect(journal.isWritable)
        #expect(journal.stats.appends == 2 && journal.stats.failures == 1 && journal.stats.duplicates == 0)
    }

    /// `flush` promises every append made before it has its outcome. An append answered by a
    /// retry (its first copy failed) only has one once the retry's batch is written.
    @Test func flushWaitsForAppendsAnsweredByARetry() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let journal = try await journalFailingItsNextBatch(in: dir)
        defer { journal.close() }
        let events = Locked<[String]>([])
        let group = DispatchGroup()
        for n in 0..<2 {
            group.enter()
            journal.append(id: "same", payload: [UInt8(n)]) { outcome in
                events.withLock { $0.append("append \(n): \(outcome.position != nil ? "stored" : "not stored")") }
                group.leave()
            }
        }
        group.enter()
        journal.flush {
            events.withLock { $0.append("flush") }
            group.leave()
        }
        journal.queueWriteRedirectForTesting(to: nil)
        journal.resumeWriterForTesting()
        await withCheckedContinuation { continuation in group.notify(queue: .global()) { continuation.resume() } }
        #expect(events.current == ["append 0: not stored", "append 1: stored", "flush"])
    }

    /// A journal whose next batch goes to /dev/full (ENOSPC), with its writer held so that
    /// appends pile up behind that batch; the caller queues the redirect back and resumes.
    private func journalFailingItsNextBatch(in dir: TemporaryDirectory) async throws -> Journal {
        try #require(fileExists("/dev/full"), "needs /dev/full")
        let journal = try open(dir.journal)
        _ = try #require(await journal.append(id: "warmup", "x").position)
        try journal.redirectWritesForTesting(to: "/dev/full")
        journal.suspendWriterForTesting()
        return journal
    }
}
