import Dispatch
import Foundation
import StoreRelayCore
@testable import StoreRelayStorage
import StoreRelayTestSupport
import Testing

/// `PendingRecordLog`, the group-committed file behind the Google Play enrichment inbox: what
/// was put durably comes back after a restart in order, removals stay removed, a burst shares
/// one sync, torn and damaged tails are cut off (and kept aside), a failed write is refused and
/// repaired, and the file stays small however much passes through it.
@Suite struct PendingRecordLogTests {
    let directory: String
    let logs = MemorySink()

    init() throws {
        directory = try TestPaths.makeTemporaryDirectory("pending-log").appendingPathComponent("inbox").path
    }

    private var path: String { directory + "/inbox.log" }

    private func open(compactionThreshold: Int = 1 << 20) throws -> (PendingRecordLog, [PendingRecord]) {
        let log = PendingRecordLog(directory: directory, name: "inbox.log", logger: Logger(label: "test", level: .info, sink: logs),
                                   compactionThreshold: compactionThreshold)
        return (log, try log.recover())
    }

    private func record(_ id: String, _ size: Int = 40) -> PendingRecord {
        PendingRecord(id: id, bytes: Array(repeating: UInt8(ascii: "x"), count: size) + Array(id.utf8))
    }

    /// Puts and waits for the completion; the error it got, if any.
    @discardableResult
    private func put(_ log: PendingRecordLog, _ record: PendingRecord) -> StorageError? {
        let done = DispatchSemaphore(value: 0)
        let result = Locked<StorageError?>(nil)
        log.put(record) { error in
            result.withLock { $0 = error }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success, "the put never completed")
        return result.current
    }

    /// Waits until the writer has handled everything queued before.
    private func drain(_ log: PendingRecordLog) { put(log, record("drain-\(UUID().uuidString)")) }

    @Test func whatWasPutComesBackInOrderAndRemovalsStayRemoved() throws {
        let (log, recovered) = try open()
        #expect(recovered.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: directory), "nothing is created before the first put")
        for id in ["a", "b", "c", "d"] { #expect(put(log, record(id)) == nil) }
        #expect(log.contains("b"))
        log.remove("b")
        #expect(!log.contains("b"))
        #expect(put(log, record("e")) == nil)
        #expect(log.count == 4)

        let (_, again) = try open()
        #expect(again.map(\.id) == ["a", "c", "d", "e"])
        #expect(again.first == record("a"))
        #expect(PendingRecordLog.read(path)?.map(\.id) == ["a", "c", "d", "e"])
    }

    /// A put is held only once it is durable: a redelivery that asks meanwhile must not be
    /// told the first copy is safe while its write may still fail.
    @Test func aPutIsHeldOnlyOnceDurable() throws {
        let (log, _) = try open()
        let done = DispatchSemaphore(value: 0)
        log.suspendWriterForTesting()
        log.put(record("a")) { _ in done.signal() }
        #expect(!log.contains("a"))
        log.resumeWriterForTesting()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(log.contains("a"))
    }

    @Test func recoveringAgainReturnsWhatIsLive() throws {
        let (log, _) = try open()
        put(log, record("a"))
        put(log, record("b"))
        log.remove("a")
        drain(log)
        let again = try log.recover()
        #expect(again.map(\.id).filter { !$0.hasPrefix("drain-") } == ["b"])
        #expect(put(log, record("c")) == nil)
        #expect(try open().1.map(\.id).filter { !$0.hasPrefix("drain-") } == ["b", "c"])
    }

    @Test func aPutOfAKnownIdReplacesIt() throws {
        let (log, _) = try open()
        put(log, record("a", 10))
        put(log, record("a", 20))
        let (_, again) = try open()
        #expect(again == [record("a", 20)])
    }

    @Test func aBurstSharesOneSync() throws {
        let (log, _) = try open()
        put(log, record("first"))
        let before = log.syncCountForTesting
        let completed = Locked(0)
        let all = DispatchGroup()
        log.suspendWriterForTesting()
        for index in 0..<200 {
            all.enter()
            log.put(record("burst-\(index)")) { error in
                if error == nil { completed.withLock { $0 += 1 } }
                all.leave()
            }
        }
        // Removals alone are written without a sync of their own.
        log.remove("first")
        log.resumeWriterForTesting()
        #expect(all.wait(timeout: .now() + 10) == .success)
        #expect(completed.current == 200)
        #expect(log.syncCountForTesting == before + 1)
        log.remove("burst-0")
        drain(log)
        let ids = try open().1.map(\.id)
        #expect(ids.count == 200 && !ids.contains("first") && !ids.contains("burst-0"))
    }

    /// Copies of damage a start cut off, beside the log.
    private var damagedCopies: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix("inbox.log.damaged-") }
    }

    @Test func aTornTailIsCutOff() throws {
        let (log, _) = try open()
        put(log, record("a"))
        put(log, record("b"))
        let whole = try Data(contentsOf: URL(fileURLWithPath: path))
        var torn: [UInt8] = []
        PendingLogFormat.encode(.put(record("c")), into: &torn)
        try (whole + torn.prefix(torn.count - 3)).write(to: URL(fileURLWithPath: path))

        let (reopened, again) = try open()
        #expect(again.map(\.id) == ["a", "b"])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == whole, "the torn record is cut off")
        #expect(damagedCopies.isEmpty, "a torn append is what a crash leaves, not damage to keep")
        #expect(logs.lines.contains { $0.contains("a torn append cut off") })
        // Appends go where the torn one was.
        #expect(put(reopened, record("d")) == nil)
        #expect(try open().1.map(\.id) == ["a", "b", "d"])
    }

    @Test func damageBeforeTheEndKeepsTheRecordsBeforeIt() throws {
        let (log, _) = try open()
        for id in ["a", "b", "c"] { put(log, record(id)) }
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        let second = PendingLogFormat.header.count + PendingLogFormat.encodedSize(of: record("a"))
        bytes[second + 20] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let (_, again) = try open()
        #expect(again.map(\.id) == ["a"])
        let copy = try #require(damagedCopies.first)
        let aside = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/" + copy)))
        #expect(aside == Array(bytes[second...]), "the damaged records are kept for an operator")
        #expect(logs.lines.contains { $0.contains("pending-record log damaged") && $0.contains("\"level\":\"error\"") })
    }

    @Test func aFileThatIsNotALogRefusesToOpen() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data("not a log at all".utf8).write(to: URL(fileURLWithPath: path))
        let log = PendingRecordLog(directory: directory, name: "inbox.log", logger: Logger(label: "test", level: .info, sink: logs))
        #expect {
            try log.recover()
        } throws: { error in
            (error as? StorageError)?.code == .corruptSegment
        }
        // Nor is anything appended to it blind, nor is it rebuilt over.
        #expect(put(log, record("a"))?.code == .closed)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("not a log at all".utf8))
    }

    @Test func nothingIsWrittenBeforeRecovery() throws {
        let log = PendingRecordLog(directory: directory, name: "inbox.log", logger: Logger(label: "test", level: .info, sink: logs))
        #expect(put(log, record("a"))?.code == .closed)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aHeaderCutShortByACrashIsAnEmptyLog() throws {
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(PendingLogFormat.header.prefix(3)).write(to: URL(fileURLWithPath: path))
        let (log, recovered) = try open()
        #expect(recovered.isEmpty)
        #expect(put(log, record("a")) == nil)
        #expect(try open().1.map(\.id) == ["a"])
    }

    @Test func aFailedWriteIsRefusedAndTheLogRepairsItself() throws {
        let (log, _) = try open()
        #expect(put(log, record("a")) == nil)
        #expect(put(log, record("gone")) == nil)
        try log.redirectNextWriteForTesting(to: "/dev/full")
        log.suspendWriterForTesting()
        log.remove("gone")
        let failed = Locked<StorageError?>(nil)
        let done = DispatchSemaphore(value: 0)
        log.put(record("b")) { error in
            failed.withLock { $0 = error }
            done.signal()
        }
        log.resumeWriterForTesting()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(failed.current?.code == .io, "\(String(describing: failed.current))")
        #expect(!log.contains("b"), "a put that failed is not held")
        #expect(put(log, record("c")) == nil)
        #expect(try open().1.map(\.id) == ["a", "c"], "the removal in the failed batch holds")
    }

    @Test func aDirectoryThatCannotBeMadeFailsThePut() throws {
        let blocker = try TestPaths.makeTemporaryDirectory("pending-log-blocked").appendingPathComponent("file").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: blocker))
        let log = PendingRecordLog(directory: blocker + "/inbox", name: "inbox.log", logger: Logger(label: "test", level: .info, sink: logs))
        #expect(try log.recover().isEmpty)
        #expect(put(log, record("a"))?.code == .io)
        #expect(!log.contains("a"))
    }

    @Test func idsThatCannotBeFramedAreRefused() throws {
        let (log, _) = try open()
        #expect(put(log, PendingRecord(id: "", bytes: [1]))?.code == .recordTooLarge)
        #expect(put(log, PendingRecord(id: String(repeating: "i", count: 1025), bytes: [1]))?.code == .recordTooLarge)
        #expect(log.count == 0)
    }

    /// The file is rewritten once it is mostly removed records: its size follows what is
    /// pending, not what passed through, and the rewrite loses nothing.
    @Test func theFileStaysSmallHoweverMuchPassesThrough() throws {
        let (log, _) = try open(compactionThreshold: 4096)
        put(log, record("kept", 100))
        for index in 0..<500 {
            put(log, record("passing-\(index)", 200))
            log.remove("passing-\(index)")
        }
        drain(log)
        let size = try #require(JournalFiles.fileSize(path))
        #expect(size < 3 * 4096, "\(size) bytes after 100 KB passed through")
        let ids = try open().1.map(\.id)
        #expect(ids.first == "kept")
        #expect(ids.allSatisfy { $0 == "kept" || $0.hasPrefix("drain-") })
    }

    /// Random bytes, and every truncation and byte flip of a real log, never crash the scan,
    /// and what it returns is always a prefix of what was written.
    @Test func scansOfDamagedFilesNeverCrashAndReturnAPrefix() throws {
        var written: [PendingLogRecord] = []
        var bytes = PendingLogFormat.header
        for index in 0..<6 {
            let next: PendingLogRecord = index == 3 ? .remove("r1") : .put(record("r\(index)", index * 7))
            PendingLogFormat.encode(next, into: &bytes)
            written.append(next)
        }
        func check(_ candidate: [UInt8]) {
            let scan = PendingLogFormat.scan(candidate[...])
            guard scan.validHeader else { return }
            #expect(Array(written.prefix(scan.records.count)) == scan.records)
            #expect(scan.end <= candidate.count)
        }
        for length in 0...bytes.count { check(Array(bytes.prefix(length))) }
        for offset in 0..<bytes.count {
            var flipped = bytes
            flipped[offset] ^= 0x5A
            check(flipped)
        }
        var generator = SeededGenerator(seed: 0x5052_4C47)
        for _ in 0..<2_000 {
            let length = Int.random(in: 0..<300, using: &generator)
            let noise = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
            _ = PendingLogFormat.scan((PendingLogFormat.header + noise)[...])
        }
    }
}
